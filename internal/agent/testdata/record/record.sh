#!/bin/sh
# record.sh AGENT SCRIPT OUT [ARGS...]: run the genuine CLI (copilot, qwen, claude, codex,
# opencode or gemini, installed in $LAB: see README.md and lab.sh) once, headless, with the
# argv git-ralph's driver gives it, in a scratch git repository, against model.go on
# loopback, inside a network namespace that has nothing but loopback (unshare -n, or -rn
# without root). Writes OUT.ndjson (stdout), OUT.stderr, OUT.exit, OUT.requests.jsonl (what
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
export AGENT REPO HOMEDIR OUT LAB HERE PROMPT="${PROMPT:-Say hello}"
$NS sh -c '
. "$HERE/lab.sh"
ip link set lo up
"$LAB/model" -script "$LAB/script.json" -log "$OUT.requests.jsonl" -port-file "$LAB/port" >/dev/null 2>"$OUT.model.err" &
MP=$!
sleep 0.5
PORT=$(cat "$LAB/port")
configure $AGENT "$HOMEDIR" $PORT
cd "$REPO"
M=$(model_of $AGENT)
case $AGENT in
copilot) set -- --output-format json --allow-all-tools --model $M --usage-output-file "$OUT.usage.json" "$@" ;;
qwen) set -- -o stream-json --yolo "$@" ;;
claude) set -- -p --output-format stream-json --verbose --dangerously-skip-permissions --model $M "$@" ;;
codex) set -- exec --json --dangerously-bypass-approvals-and-sandbox -m $M --output-last-message "$OUT.last.txt" "$@" - ;;
opencode) set -- run --format json --auto -m $M "$@" ;;
gemini) set -- --output-format stream-json --yolo --skip-trust -m $M "$@" ;;
esac
echo "$PROMPT" | env -i PATH=/usr/bin:/bin HOME="$HOMEDIR" TERM=dumb $(env_of $AGENT $PORT) \
  $(bin $AGENT) "$@" >"$OUT.ndjson" 2>"$OUT.stderr" && echo 0 > "$OUT.exit" || echo $? > "$OUT.exit"
kill $MP
' sh "$@"
git -C "$REPO" log --oneline
