# bash completion for nfkeeper.
#
# Subcommands and options come from the program's own --help at completion
# time (`nfkeeper --help`, `nfkeeper SUBCOMMAND --help`), so they are what
# the installed binary accepts and cannot drift from it.

# The usage lines' subcommands, and the iptables personalities the help
# names in its prose.
_nfkeeper_subcommands() {
    local help
    help=$("$1" --help 2>/dev/null)
    {
        printf '%s\n' "$help" |
            sed -n 's/^  nfkeeper \(\[[^]]*\] \)\{0,1\}\([a-z][a-z0-9-]*\).*/\2/p'
        printf '%s\n' "$help" | grep -o -E '\bip6?tables(-save|-restore)?\b'
    } | sort -u
}

_nfkeeper_options() {
    "$1" "$2" --help 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u
}

_nfkeeper() {
    local cur=${COMP_WORDS[COMP_CWORD]}
    local prog=${COMP_WORDS[0]}
    local sub="" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            --direct | --daemon | --no-compile-runs) ;;
            -*) ;;
            *) sub=${COMP_WORDS[i]}; break ;;
        esac
    done
    if [ -z "$sub" ]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--direct --daemon --no-compile-runs --help --version" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$(_nfkeeper_subcommands "$prog")" -- "$cur"))
        fi
        return
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_nfkeeper_options "$prog" "$sub")" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}

complete -F _nfkeeper nfkeeper
