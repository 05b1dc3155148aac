#!/bin/sh
# install.sh: build git-ralph from this checkout with the local Go toolchain and install
# it, with its man page, under $PREFIX (default: $HOME/.local). Writes nothing outside
# $PREFIX (Go's own build caches aside) and is safe to run again.
set -eu

err() { echo "install.sh: $*" >&2; exit 1; }
need_cmd() { command -v "$1" >/dev/null 2>&1 || err "need '$1' (not found on PATH)"; }

main() {
	need_cmd go
	need_cmd git
	PREFIX=${PREFIX:-"$HOME/.local"}
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
	echo "installed $bindir/git-ralph"
	echo "installed $mandir/git-ralph.1"

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
