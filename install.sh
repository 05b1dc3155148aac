#!/bin/sh
# install.sh: build git-ralph from this checkout with the local Go toolchain and install
# it, with its man page, under $PREFIX (default: $HOME/.local, or, when its bin is not on
# PATH, a prefix whose bin is: Go's install directory or a writable /usr/local). Writes
# nothing outside $PREFIX (Go's own build caches aside) and is safe to run again.
set -eu

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

main() {
	need_cmd go
	need_cmd git
	if [ -z "${PREFIX:-}" ]; then
		PREFIX=$(default_prefix)
	fi
	here=$(cd "$(dirname "$0")" && pwd)
	[ -f "$here/go.mod" ] || err "run me from a git-ralph checkout"

	version=$(git -C "$here" describe --tags --always --dirty 2>/dev/null || echo dev)
	bindir="$PREFIX/bin"
	mandir="$PREFIX/share/man/man1"
	mkdir -p "$bindir" "$mandir"

	tmp="$bindir/.git-ralph.tmp.$$"
	trap 'rm -f "$tmp" "$mandir/.git-ralph.1.tmp.$$"' EXIT INT TERM
	echo "building git-ralph $version"
	(cd "$here" && go build -trimpath -ldflags "-s -w -X github.com/git-ralph/git-ralph/internal/cli.Version=$version" -o "$tmp" ./git-ralph)
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

	case ":$PATH:" in
	*":$bindir:"*)
		git ralph --version ;;
	*)
		echo
		echo "$bindir is not on your PATH. Add it, e.g. in ~/.profile:"
		echo "    export PATH=\"$bindir:\$PATH\""
		echo "then 'git ralph --version' works. For this shell only:"
		echo "    export PATH=\"$bindir:\$PATH\""
		;;
	esac
}

main "$@"
