#!/bin/sh
# install.sh: build git-ralph from this checkout with the local Go toolchain and install
# it, with its man page and shell completion, under $PREFIX (default: $HOME/.local, or,
# when its bin is not on PATH, a prefix whose bin is: Go's install directory or a
# writable /usr/local). When $PREFIX/bin is not on PATH, it adds it to PATH in a marked
# block of the shell start-up files (--no-modify-path: it only says how). --demo then
# runs 'git ralph demo' with the binary just installed. Writes nothing else outside
# $PREFIX (Go's own build caches aside) and is safe to run again.
set -eu

usage() {
	cat <<'USAGE'
usage: ./install.sh [--demo] [--no-modify-path]

Builds git-ralph from this checkout and installs it, its man page and its shell
completion under $PREFIX (PREFIX=... ./install.sh picks it; default: $HOME/.local, or a
prefix whose bin is already on PATH).

  --demo             then run 'git ralph demo' with the git-ralph just installed
  --no-modify-path   do not add $PREFIX/bin to PATH in your shell's start-up files
                     (~/.profile; ~/.bash_profile or ~/.bash_login if you have one;
                     ~/.zshenv for zsh); only say how
USAGE
}

err() { echo "install.sh: $*" >&2; exit 1; }
need_cmd() { command -v "$1" >/dev/null 2>&1 || err "need '$1' (not found on PATH)"; }

on_path() { case ":$PATH:" in *":$1:"*) return 0 ;; esac; return 1; }

# default_prefix is $HOME/.local, unless its bin is not on PATH and another prefix's is
# (so that 'git ralph' works at once): Go's own install directory, then /usr/local when
# writable. PREFIX=… always wins.
default_prefix() {
	if on_path "$HOME/.local/bin"; then
		echo "$HOME/.local"
		return
	fi
	gobin=$(go env GOBIN)
	[ -n "$gobin" ] || gobin="$(go env GOPATH | cut -d: -f1)/bin"
	if [ "$(basename "$gobin")" = bin ] && on_path "$gobin" && [ -d "$gobin" ] && [ -w "$gobin" ]; then
		dirname "$gobin"
		return
	fi
	if on_path /usr/local/bin && [ -w /usr/local/bin ]; then
		echo /usr/local
		return
	fi
	echo "$HOME/.local"
}

# install_completion SHELL DIR FILE writes 'git ralph completion SHELL' to DIR/FILE.
install_completion() {
	mkdir -p "$2"
	"$bindir/git-ralph" completion "$1" >"$2/.$3.tmp.$$"
	mv -f "$2/.$3.tmp.$$" "$2/$3"
	echo "installed $2/$3"
}

# The block that puts $bindir on PATH in a start-up file, between two marker lines, so
# that a rerun finds it and replaces it instead of adding a second one.
marker_begin='# >>> git-ralph PATH >>> (added by git-ralph install.sh; delete this block to undo)'
marker_end='# <<< git-ralph PATH <<<'
path_block() {
	printf '%s\n' "$marker_begin"
	printf 'case ":${PATH}:" in *":%s:"*) ;; *) export PATH="%s:${PATH}" ;; esac\n' "$1" "$1"
	printf '%s\n' "$marker_end"
}

# startup_files are the files a login shell of this user reads that should carry the
# block: ~/.profile (sh, dash, ksh, and bash unless it has its own), bash's own login
# file when there is one, and ~/.zshenv for a zsh user.
startup_files() {
	echo "$HOME/.profile"
	if [ -f "$HOME/.bash_profile" ]; then
		echo "$HOME/.bash_profile"
	elif [ -f "$HOME/.bash_login" ]; then
		echo "$HOME/.bash_login"
	fi
	case "${SHELL:-}" in
	*/zsh) echo "$HOME/.zshenv" ;;
	*) [ ! -f "$HOME/.zshenv" ] || echo "$HOME/.zshenv" ;;
	esac
}

# add_to_path FILE writes the PATH block into FILE: appended when FILE has none, replaced
# in place when it has another (a different prefix), left alone when it has this one.
# The file is rewritten through itself, so a symlinked dotfile stays a symlink.
add_to_path() {
	file=$1
	if { [ -e "$file" ] && [ ! -w "$file" ]; } || { [ ! -e "$file" ] && [ ! -w "$(dirname "$file")" ]; }; then
		echo "cannot write $file: add $bindir to PATH there yourself"
		return
	fi
	block=$(path_block "$bindir")
	if [ -f "$file" ] && grep -qxF "$marker_begin" "$file"; then
		if ! awk -v b="$marker_begin" -v e="$marker_end" '$0==b{f=1} f&&$0==e{ok=1} END{exit !ok}' "$file"; then
			# without its end line, everything after the block's start would go with it
			echo "$file has a git-ralph PATH block without its end line: add $bindir to PATH there yourself"
			return
		fi
		old=$(awk -v b="$marker_begin" -v e="$marker_end" '$0==b{f=1} f{print} $0==e{f=0}' "$file")
		if [ "$old" = "$block" ]; then
			echo "$file already puts $bindir on PATH"
			return
		fi
		rest=$(awk -v b="$marker_begin" -v e="$marker_end" '$0==b{f=1;next} f&&$0==e{f=0;next} !f{print}' "$file")
		printf '%s\n%s\n' "$rest" "$block" >"$file"
	else
		if [ -s "$file" ] && [ -n "$(tail -c 1 "$file")" ]; then
			echo >>"$file"
		fi
		printf '%s\n' "$block" >>"$file"
	fi
	echo "added $bindir to PATH in $file (a block marked git-ralph; ./install.sh --no-modify-path skips this)"
}

main() {
	demo=false
	modify_path=true
	for arg in "$@"; do
		case "$arg" in
		--demo) demo=true ;;
		--no-modify-path) modify_path=false ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; echo "install.sh: unknown argument '$arg'" >&2; exit 2 ;;
		esac
	done
	need_cmd go
	need_cmd git
	if [ -z "${PREFIX:-}" ]; then
		PREFIX=$(default_prefix)
	fi
	here=$(cd "$(dirname "$0")" && pwd)
	[ -f "$here/go.mod" ] || err "run me from a git-ralph checkout"
	case "$PREFIX" in
	/*) ;;
	*) # relative to where install.sh was run: the build runs in the checkout, and
		# a relative directory must never go into PATH
		mkdir -p "$PREFIX" && PREFIX=$(cd "$PREFIX" && pwd) ;;
	esac

	version=$(git -C "$here" describe --tags --always --dirty 2>/dev/null || echo dev)
	bindir="$PREFIX/bin"
	mandir="$PREFIX/share/man/man1"
	mkdir -p "$bindir" "$mandir"

	tmp="$bindir/.git-ralph.tmp.$$"
	trap 'rm -f "$tmp" "$mandir/.git-ralph.1.tmp.$$"' EXIT INT TERM
	echo "building git-ralph $version"
	# Static (CGO_ENABLED=0): git-ralph re-executes itself to launch every agent in
	# its sandbox, and a binary without the dynamic loader and libc starts about a
	# millisecond sooner each time (docs/DESIGN-LOG.md, "the launcher's cost").
	(cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/git-ralph/git-ralph/internal/cli.Version=$version" -o "$tmp" ./git-ralph)
	mv -f "$tmp" "$bindir/git-ralph"
	"$bindir/git-ralph" man >"$mandir/.git-ralph.1.tmp.$$"
	mv -f "$mandir/.git-ralph.1.tmp.$$" "$mandir/git-ralph.1"
	echo "installed $bindir/git-ralph (PREFIX=$PREFIX)"
	echo "installed $mandir/git-ralph.1"
	# Shell completion where each shell looks under $PREFIX/share: bash-completion
	# loads git-ralph when git's completion asks for _git_ralph; zsh's git completion
	# calls _git-ralph from $fpath; fish's hands 'git ralph' to git-ralph's completions.
	install_completion bash "$PREFIX/share/bash-completion/completions" git-ralph
	install_completion zsh "$PREFIX/share/zsh/site-functions" _git-ralph
	install_completion fish "$PREFIX/share/fish/vendor_completions.d" git-ralph.fish

	if on_path "$bindir"; then
		found=$(command -v git-ralph 2>/dev/null || true)
		if [ -n "$found" ] && [ ! "$found" -ef "$bindir/git-ralph" ]; then
			echo "note: $found comes before $bindir on your PATH, so 'git ralph' runs that one; remove it, or put $bindir first"
		fi
		git ralph --version
	else
		case "$bindir" in
		*[\"\\\$\`]*) modify_path=false ;; # not a path to write into a shell file
		esac
		if $modify_path; then
			startup_files | while IFS= read -r f; do add_to_path "$f"; done
			echo "'git ralph' works in your next login shell. For this shell:"
		else
			echo
			echo "$bindir is not on your PATH. Add it, e.g. in ~/.profile:"
			echo "    export PATH=\"$bindir:\$PATH\""
			echo "then 'git ralph --version' works. For this shell only:"
		fi
		echo "    export PATH=\"$bindir:\$PATH\""
	fi
	if $demo; then
		echo
		PATH="$bindir:$PATH" "$bindir/git-ralph" demo
	fi
}

main "$@"
