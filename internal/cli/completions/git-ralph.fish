# fish completion for git ralph (git-ralph). fish's git completion hands
# "git ralph …" to the completions of the command git-ralph. Installed by
# install.sh as $PREFIX/share/fish/vendor_completions.d/git-ralph.fish; print it
# with 'git ralph completion fish'. Every candidate comes from 'git ralph __complete'.

function __git_ralph_sub
    set -l cmds (git ralph __complete commands 2>/dev/null)
    for w in (commandline -opc)[2..-1]
        if contains -- $w $cmds
            echo $w
            return 0
        end
    end
    return 1
end

function __git_ralph_sub_is
    set -l sub (__git_ralph_sub)
    contains -- "$sub" $argv
end

complete -c git-ralph -f
complete -c git-ralph -n 'not __git_ralph_sub' -a '(git ralph __complete commands 2>/dev/null)'
complete -c git-ralph -n '__git_ralph_sub_is start' -a '(git ralph __complete changes 2>/dev/null)'
complete -c git-ralph -n '__git_ralph_sub_is status finish' -a '(git ralph __complete runs 2>/dev/null)'
complete -c git-ralph -n '__git_ralph_sub_is report' -a '(git ralph __complete reports 2>/dev/null)'
complete -c git-ralph -n '__git_ralph_sub_is completion' -a 'bash zsh fish'
complete -c git-ralph -n '__git_ralph_sub_is hooks; and not __fish_seen_subcommand_from install uninstall list' -a 'install uninstall list'
complete -c git-ralph -n '__git_ralph_sub_is hooks; and __fish_seen_subcommand_from install uninstall' -a '(git ralph __complete hooks 2>/dev/null)'
complete -c git-ralph -n '__git_ralph_sub_is start' -l agent -x -a '(git ralph __complete agents 2>/dev/null)'
complete -c git-ralph -n '__git_ralph_sub_is start' -l judge -x -a '(git ralph __complete agents 2>/dev/null)'
complete -c git-ralph -n 'string match -q -- "-*" (commandline -ct)' -a '(git ralph __complete flags (__git_ralph_sub) 2>/dev/null)'
