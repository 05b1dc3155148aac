#!/bin/sh
# loop.sh AGENT SCRIPT OUT: `git ralph start greet --agent AGENT` (with git-ralph's default
# --sandbox=auto) with the genuine CLI (copilot, qwen, claude, codex, opencode or gemini,
# installed in $LAB: see README.md and lab.sh) against model.go, in a network namespace with
# loopback only, on a scratch repository whose change "greet" has two stories. Writes
# OUT.stderr (git-ralph's output), OUT.log (git log with the checkpoints' trailers),
# OUT.status, OUT.status.json, OUT.requests.jsonl (what the CLI sent the model), OUT.logs/
# (git-ralph's log of each attempt) and OUT.txt (output, log and status: runs/).
# MAX_TOKENS sets --max-tokens (default 1000000); START_ARGS are added to `git ralph start`
# (e.g. --sandbox=off, to compare); TRACE=1: see lab.sh. See README.md.
set -eu
AGENT=$1 SCRIPT=$2 OUT=$3 OUT_ARG=$3 START_ARGS=${START_ARGS:-}
LAB=${LAB:-/tmp/agentslab}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lab.sh"
case $OUT in /*) ;; *) OUT=$(pwd)/$OUT ;; esac
mkdir -p "$LAB/bin" "$(dirname "$OUT")"
(cd "$HERE" && go build -o "$LAB/model" model.go && cd ../../../.. && go build -o "$LAB/bin/git-ralph" ./git-ralph)
shims
REPO=$LAB/loop-$AGENT HOMEDIR=$LAB/loophome-$AGENT
rm -rf "$REPO" "$REPO.ralph" "$HOMEDIR" "$OUT.requests.jsonl" "$OUT.logs"; mkdir -p "$REPO/openspec/changes/greet" "$HOMEDIR"
printf '## 1. Greeting\n- [ ] 1.1 Write greeting.txt\n\n## 2. Farewell\n- [ ] 2.1 Write farewell.txt\n' > "$REPO/openspec/changes/greet/tasks.md"
git -C "$REPO" init -q
git -C "$REPO" config user.name "Ralph Test"; git -C "$REPO" config user.email ralph@example.com
git -C "$REPO" add -A; git -C "$REPO" commit -qm base
# The scripts name files by absolute path (Claude Code wants them so): the agent's working
# tree, which --worktree puts in ../loop-AGENT.ralph/greet.
TREE=$REPO; case " $START_ARGS " in *" --worktree "*) TREE=$REPO.ralph/greet ;; esac
sed "s#REPO#$TREE#g" "$SCRIPT" > "$LAB/loop-script.json"
NS="unshare -n"; [ "$(id -u)" = 0 ] || NS="unshare -rn"
export AGENT SCRIPT OUT_ARG REPO HOMEDIR OUT LAB HERE TRACE="${TRACE:-}" START_ARGS MAX_TOKENS_SET="${MAX_TOKENS:-}" MAX_TOKENS="${MAX_TOKENS:-1000000}"
$NS sh -c '
. "$HERE/lab.sh"
ip link set lo up
"$LAB/model" -script "$LAB/loop-script.json" -log "$OUT.requests.jsonl" -port-file "$LAB/port" >/dev/null 2>"$OUT.model.err" &
MP=$!
sleep 0.5
PORT=$(cat "$LAB/port")
configure $AGENT "$HOMEDIR" $PORT
cd "$REPO"
E="PATH=$LAB/bin:$LAB/shim:/usr/bin:/bin HOME=$HOMEDIR TERM=dumb GIT_CONFIG_NOSYSTEM=1 $(env_of $AGENT $PORT)"
env -i $E git ralph start greet --agent $AGENT --model $(model_of $AGENT) --max-tokens $MAX_TOKENS $START_ARGS >"$OUT.stdout" 2>"$OUT.stderr" || echo "exit $?" >>"$OUT.stderr"
env -i $E git log --format="%h %s%n%b" ralph/greet > "$OUT.log"
env -i $E git ralph status greet > "$OUT.status" 2>&1 || true
env -i $E git ralph status greet --json > "$OUT.status.json" 2>&1 || true
cp -r .git/ralph/greet/logs "$OUT.logs" 2>/dev/null || true
kill $MP
'
{
	echo "# ${MAX_TOKENS_SET:+MAX_TOKENS=$MAX_TOKENS }${START_ARGS:+START_ARGS=$START_ARGS }./loop.sh $AGENT $SCRIPT $OUT_ARG  (git-ralph's stderr, git log, status)"
	cat "$OUT.stderr"; echo; echo "## git log"; cat "$OUT.log"; echo "## git ralph status greet"; cat "$OUT.status"
} > "$OUT.txt"
cat "$OUT.log"
