#!/bin/sh
# storyphases.sh [ROUNDS [BASE]]: git-ralph's own cost per story, from the outside. Builds
# git-ralph as install.sh does, makes a 40-story repository in tmpfs with an instant agent
# (a shell script named claude that ticks the story and writes a file), then ROUNDS times
# (default 5), alternately: `git ralph start` and a bare loop (the same agent, then
# `git add -A && git commit`, per story), wall and CPU time (user+sys, children
# included); then one run under `perf trace` whose phases .ci/storyphases.go prints.
# With BASE (a revision), git-ralph built from it runs too, before each of this tree's
# runs, and its phases print first: a before and after measured at the same moments.
# Needs perf (root or perf_event_paranoid <= -1) and /usr/bin/time. Writes only below
# a temporary directory, removed at the end.
set -eu
rounds=${1:-5}
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /dev/shm/storyphases.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/home"
(cd "$src" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$tmp/bin/git-ralph" ./git-ralph)
(cd "$src" && go build -o "$tmp/storyphases" .ci/storyphases.go)
base=${2:-}
if [ -n "$base" ]; then
	mkdir -p "$tmp/base/src" "$tmp/base/bin"
	(cd "$src" && git archive "$base") | tar -x -C "$tmp/base/src"
	(cd "$tmp/base/src" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$tmp/base/bin/git-ralph" ./git-ralph)
fi
cat > "$tmp/bin/claude" <<'AGENT'
#!/bin/sh
cat >/dev/null
echo "the work of story $RALPH_STORY" > "story-$RALPH_STORY.txt"
sed -i "s/^- \[ \] $RALPH_STORY\.1 /- [x] $RALPH_STORY.1 /" openspec/changes/x/tasks.md
echo '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"<promise>COMPLETE</promise>","session_id":"s","total_cost_usd":0,"usage":{"input_tokens":1,"output_tokens":1}}'
AGENT
chmod +x "$tmp/bin/claude"
printf '[init]\n\tdefaultBranch = main\n[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n' > "$tmp/home/.gitconfig"
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$tmp/home/.gitconfig"
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=A GIT_COMMITTER_EMAIL=a@example.com NO_COLOR=1 CI=true
export PATH="$tmp/bin:$PATH"
tmpl="$tmp/template"
mkdir -p "$tmpl/openspec/changes/x"
(
	cd "$tmpl"
	git init -q -b main
	{ echo "# Tasks"; i=1; while [ $i -le 40 ]; do printf '\n## %d. Story %d\n- [ ] %d.1 Write story-%d.txt\n' $i $i $i $i; i=$((i+1)); done; } > openspec/changes/x/tasks.md
	i=0; while [ $i -lt 50 ]; do yes line | head -$((i+1)) > file-$i.txt; i=$((i+1)); done
	git add -A && git commit -q -m base
)
cat > "$tmp/bin/bare-loop" <<'BARE'
#!/bin/sh
s=1
while [ $s -le 40 ]; do
	echo "Work on story $s" | RALPH_AGENT=1 RALPH_CHANGE=x RALPH_STORY=$s RALPH_ATTEMPT=1 claude -p >/dev/null
	git add -A && git commit -q -m "story $s"
	s=$((s+1))
done
BARE
chmod +x "$tmp/bin/bare-loop"
kinds="ralph bare"
[ -n "$base" ] && kinds="base ralph bare"
r=1
while [ $r -le "$rounds" ]; do
	for kind in $kinds; do
		rm -rf "$tmp/w" && cp -a "$tmpl" "$tmp/w" && cd "$tmp/w"
		case $kind in
		base) PATH="$tmp/base/bin:$PATH" /usr/bin/time -f "base  %e s wall %U+%S s cpu" git ralph start x >/dev/null 2>"$tmp/err" ;;
		ralph) /usr/bin/time -f "ralph %e s wall %U+%S s cpu" git ralph start x >/dev/null 2>"$tmp/err" ;;
		bare) /usr/bin/time -f "bare  %e s wall %U+%S s cpu" bare-loop >/dev/null 2>"$tmp/err" ;;
		esac || { cat "$tmp/err"; exit 1; }
		tail -1 "$tmp/err"
		cd "$tmp"
	done
	echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
	r=$((r+1))
done
for kind in $kinds; do
	[ $kind = bare ] && continue
	path=$PATH
	[ $kind = base ] && path="$tmp/base/bin:$PATH"
	rm -rf "$tmp/w" && cp -a "$tmpl" "$tmp/w" && cd "$tmp/w"
	PATH=$path perf trace -o "$tmp/trace" -e execve,exit_group,fsync,mkdirat,unlinkat -- git ralph start x >/dev/null 2>&1
	[ -n "$base" ] && echo "$kind:"
	"$tmp/storyphases" < "$tmp/trace"
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
