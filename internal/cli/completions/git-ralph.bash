# bash completion for git ralph (git-ralph). Git's own bash completion calls
# _git_ralph for "git ralph …", loading this file by the name git-ralph from
# bash-completion's directories when needed. Installed by install.sh as
# $PREFIX/share/bash-completion/completions/git-ralph; print it with
# 'git ralph completion bash'. Every candidate comes from 'git ralph __complete',
# so it matches the installed git-ralph and the repository on the command line.

_git_ralph ()
{
	local cmds sub
	cmds="$(__git ralph __complete commands)"
	sub="$(__git_find_on_cmdline "$cmds")"

	case "$cur" in
	--agent=*)
		__gitcomp_nl "$(__git ralph __complete agents)" "" "${cur##--agent=}"
		return
		;;
	--output=*)
		return
		;;
	esac
	case "$prev" in
	--agent)
		__gitcomp_nl "$(__git ralph __complete agents)"
		return
		;;
	-o|--output|--dir|--max-retries|--timeout|--idle-timeout|--model|--max-cost|--max-tokens|--verify-timeout|--wait-on-limit)
		return
		;;
	esac

	if [ -z "$sub" ]; then
		case "$cur" in
		-*)	__gitcomp "$(__git ralph __complete flags)" ;;
		*)	__gitcomp "$cmds" ;;
		esac
		return
	fi
	case "$cur" in
	-*)
		__gitcomp "$(__git ralph __complete flags "$sub")"
		return
		;;
	esac
	case "$sub" in
	start)
		__gitcomp_nl "$(__git ralph __complete changes)" ;;
	status|finish)
		__gitcomp_nl "$(__git ralph __complete runs)" ;;
	report)
		__gitcomp_nl "$(__git ralph __complete reports)" ;;
	completion)
		__gitcomp "bash zsh fish" ;;
	help)
		__gitcomp "$cmds" ;;
	hooks)
		local action
		action="$(__git_find_on_cmdline "install uninstall list")"
		case "$action" in
		"")	__gitcomp "install uninstall list" ;;
		install|uninstall)
			__gitcomp_nl "$(__git ralph __complete hooks)" ;;
		esac
		;;
	esac
}
