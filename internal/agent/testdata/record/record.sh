#!/bin/sh
# record.sh AGENT SCRIPT OUT [ARGS...]: run the genuine CLI (copilot or qwen)
# once, headless, in a scratch git repository, against model.go on loopback,
# inside a network namespace that has nothing but loopback (unshare -n, or
# -rn without root). Writes OUT.ndjson (stdout), OUT.stderr, OUT.exit, OUT.requests.jsonl (what
# the CLI sent the model) and, for copilot, OUT.usage.json. See README.md.
set -eu
AGENT=$1 SCRIPT=$2 OUT=$3; shift 3
LAB=${LAB:-/tmp/agentslab}
HERE=$(cd "$(dirname "$0")" && pwd)
case $OUT in /*) ;; *) OUT=$(pwd)/$OUT ;; esac
mkdir -p "$LAB"
(cd "$HERE" && go build -o "$LAB/model" model.go)
REPO=$LAB/repo-$AGENT HOMEDIR=$LAB/home-$AGENT
rm -rf "$REPO" "$HOMEDIR"; mkdir -p "$REPO" "$HOMEDIR"
git -C "$REPO" init -q
echo hi > "$REPO/README.md"
git -C "$REPO" -c user.name=t -c user.email=t@t add .
git -C "$REPO" -c user.name=t -c user.email=t@t commit -qm init
git -C "$REPO" config user.name "Ralph Test"; git -C "$REPO" config user.email ralph@example.com
sed "s#REPO#$REPO#g" "$SCRIPT" > "$LAB/script.json"
NS="unshare -n"; [ "$(id -u)" = 0 ] || NS="unshare -rn"
export AGENT REPO HOMEDIR OUT LAB PROMPT="${PROMPT:-Say hello}"
$NS sh -c '
ip link set lo up
"$LAB/model" -script "$LAB/script.json" -log "$OUT.requests.jsonl" -port-file "$LAB/port" >/dev/null 2>"$OUT.model.err" &
MP=$!
sleep 0.5
PORT=$(cat "$LAB/port")
cd "$REPO"
case $AGENT in
copilot)
  echo "$PROMPT" | env -i PATH=/usr/bin:/bin HOME="$HOMEDIR" TERM=dumb COPILOT_OFFLINE=true \
    COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:$PORT/v1 COPILOT_PROVIDER_API_KEY=sk-loopback \
    "$LAB/node_modules/@github/copilot-linux-x64/copilot" --output-format json --allow-all-tools \
    --model gpt-4.1 --usage-output-file "$OUT.usage.json" "$@" >"$OUT.ndjson" 2>"$OUT.stderr" || true ;;
qwen)
  echo "$PROMPT" | env -i PATH=/usr/bin:/bin HOME="$HOMEDIR" TERM=dumb OPENAI_API_KEY=sk-loopback \
    OPENAI_BASE_URL=http://127.0.0.1:$PORT/v1 OPENAI_MODEL=qwen3-coder-plus \
    node "$LAB/node_modules/@qwen-code/qwen-code/cli.js" -o stream-json --yolo "$@" >"$OUT.ndjson" 2>"$OUT.stderr" || true ;;
esac
kill $MP
' sh "$@"
git -C "$REPO" log --oneline
