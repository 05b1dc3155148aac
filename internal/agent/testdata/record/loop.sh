#!/bin/sh
# loop.sh AGENT SCRIPT OUT: `git ralph start greet --agent AGENT` with the genuine CLI
# (copilot or qwen) against model.go, in a network namespace with loopback only, on a
# scratch repository whose change "greet" has two stories. Writes OUT.stderr (git-ralph's
# output), OUT.log (git log with the checkpoints' trailers), OUT.status, OUT.status.json
# and OUT.requests.jsonl. See README.md.
set -eu
AGENT=$1 SCRIPT=$2 OUT=$3
LAB=${LAB:-/tmp/agentslab}
HERE=$(cd "$(dirname "$0")" && pwd)
case $OUT in /*) ;; *) OUT=$(pwd)/$OUT ;; esac
mkdir -p "$LAB/bin" "$LAB/shim"
(cd "$HERE" && go build -o "$LAB/model" model.go && cd ../../../.. && go build -o "$LAB/bin/git-ralph" ./git-ralph)
printf '#!/bin/sh\nexec %s "$@"\n' "$LAB/node_modules/@github/copilot-linux-x64/copilot" > "$LAB/shim/copilot"
printf '#!/bin/sh\nexec node %s "$@"\n' "$LAB/node_modules/@qwen-code/qwen-code/cli.js" > "$LAB/shim/qwen"
chmod +x "$LAB/shim/copilot" "$LAB/shim/qwen"
REPO=$LAB/loop-$AGENT HOMEDIR=$LAB/loophome-$AGENT
rm -rf "$REPO" "$HOMEDIR"; mkdir -p "$REPO/openspec/changes/greet" "$HOMEDIR"
printf '## 1. Greeting\n- [ ] 1.1 Write greeting.txt\n\n## 2. Farewell\n- [ ] 2.1 Write farewell.txt\n' > "$REPO/openspec/changes/greet/tasks.md"
git -C "$REPO" init -q
git -C "$REPO" config user.name "Ralph Test"; git -C "$REPO" config user.email ralph@example.com
git -C "$REPO" add -A; git -C "$REPO" commit -qm base
sed "s#REPO#$REPO#g" "$SCRIPT" > "$LAB/loop-script.json"
NS="unshare -n"; [ "$(id -u)" = 0 ] || NS="unshare -rn"
export AGENT REPO HOMEDIR OUT LAB MAX_TOKENS="${MAX_TOKENS:-1000000}"
$NS sh -c '
ip link set lo up
"$LAB/model" -script "$LAB/loop-script.json" -log "$OUT.requests.jsonl" -port-file "$LAB/port" >/dev/null 2>"$OUT.model.err" &
MP=$!
sleep 0.5
PORT=$(cat "$LAB/port")
cd "$REPO"
E="PATH=$LAB/bin:$LAB/shim:/usr/bin:/bin HOME=$HOMEDIR TERM=dumb GIT_CONFIG_NOSYSTEM=1"
case $AGENT in
copilot) E="$E COPILOT_OFFLINE=true COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:$PORT/v1 COPILOT_PROVIDER_API_KEY=sk-loopback"; M=gpt-4.1 ;;
qwen) E="$E OPENAI_API_KEY=sk-loopback OPENAI_BASE_URL=http://127.0.0.1:$PORT/v1 OPENAI_MODEL=qwen3-coder-plus"; M=qwen3-coder-plus ;;
esac
env -i $E git ralph start greet --agent $AGENT --model $M --max-tokens ${MAX_TOKENS:-1000000} >"$OUT.stdout" 2>"$OUT.stderr" || echo "exit $?" >>"$OUT.stderr"
env -i $E git log --format="%h %s%n%b" > "$OUT.log"
env -i $E git ralph status greet > "$OUT.status" 2>&1 || true
env -i $E git ralph status greet --json > "$OUT.status.json" 2>&1 || true
kill $MP
'
cat "$OUT.log"
