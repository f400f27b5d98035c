# bash completion for exitscope(1): commands, options, the pids of processes
# running under exitscope (dump, reset), record files (*.jsonl) and profiles
# (*.data). Installed by `make install` into
# PREFIX/share/bash-completion/completions/exitscope.

# The pids of running processes that exitscope watches: those that have the
# runtime mapped, and those that hold a control socket @exitscope-PID-R.
_exitscope_pids()
{
    local maps pid
    for maps in /proc/[0-9]*/maps; do
        pid=${maps#/proc/}
        pid=${pid%/maps}
        grep -qs 'libexitscope\.so' "$maps" 2>/dev/null && echo "$pid"
    done
    sed -n 's/.*@exitscope-\([0-9][0-9]*\)-.*/\1/p' /proc/net/unix 2>/dev/null
}

# Files ending in one of the extensions given, and directories to walk into.
_exitscope_files()
{
    local ext IFS=$'\n'
    compopt -o filenames 2>/dev/null
    for ext in "$@"; do
        COMPREPLY+=($(compgen -f -X "!*.$ext" -- "$cur"))
    done
    COMPREPLY+=($(compgen -d -- "$cur"))
}

_exitscope()
{
    local cur prev cmd i
    COMPREPLY=()
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    local commands="run dump reset diff report flame help"

    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
        return
    fi
    cmd=${COMP_WORDS[1]}
    case $cmd in
    help)
        [ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        ;;
    run)
        # after the program's name (or --), complete for the program
        for ((i = 2; i < COMP_CWORD; i++)); do
            case ${COMP_WORDS[i]} in
            --) break ;;
            -o|--output-dir|-F|--frequency|-g|--call-graph|-s|--signal|-i|--interval|--format|--log) ((i++)) ;;
            -*) ;;
            *) break ;;
            esac
        done
        if [ "$i" -lt "$COMP_CWORD" ]; then
            [ "${COMP_WORDS[i]}" = -- ] && ((i++))
            if [ "$i" -eq "$COMP_CWORD" ]; then
                compopt -o filenames 2>/dev/null
                COMPREPLY=($(compgen -c -- "$cur"))
            elif declare -F _command_offset >/dev/null; then
                _command_offset "$i"
            else
                compopt -o default 2>/dev/null
            fi
            return
        fi
        case $prev in
        -o|--output-dir) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")); return ;;
        --log) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); return ;;
        -g|--call-graph) COMPREPLY=($(compgen -W "dwarf fp none" -- "$cur")); return ;;
        --format) COMPREPLY=($(compgen -W "text gramine none" -- "$cur")); return ;;
        -s|--signal) COMPREPLY=($(compgen -W "USR1 USR2 HUP RTMIN+1 none" -- "$cur")); return ;;
        -F|--frequency|-i|--interval) return ;;
        esac
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "-o --output-dir -n --no-records -p --profile -F --frequency
                -g --call-graph -s --signal -i --interval --format --log --log-each --no-fast-path -h --help --" -- "$cur"))
        else
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -c -- "$cur"))
        fi
        ;;
    dump|reset)
        if [[ $cur == -* ]]; then
            if [ "$cmd" = dump ]; then
                COMPREPLY=($(compgen -W "--json --help" -- "$cur"))
            else
                COMPREPLY=($(compgen -W "--help" -- "$cur"))
            fi
        elif [ "$COMP_CWORD" -eq 2 ] || { [ "$COMP_CWORD" -eq 3 ] && [ "$prev" = --json ]; }; then
            COMPREPLY=($(compgen -W "$(_exitscope_pids | sort -un)" -- "$cur"))
            # and run directories (dump RUN, reset RUN), not after --json
            if [ "$prev" != --json ]; then
                compopt -o filenames 2>/dev/null
                COMPREPLY+=($(compgen -d -X '!*exitscope-*' -- "$cur"))
            fi
        fi
        ;;
    diff)
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--total --json --help" -- "$cur"))
        else
            _exitscope_files jsonl
        fi
        ;;
    report)
        case $prev in
        -o|--output) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --compare) return ;;
        esac
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--json --html --compare --summary -o --output --help" -- "$cur"))
        else
            _exitscope_files jsonl
        fi
        ;;
    flame)
        case $prev in
        -o|--output) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --title|--width) return ;;
        esac
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "-o --output -t --per-thread --title --width --folded --frames --diff --help" -- "$cur"))
        else
            _exitscope_files data
        fi
        ;;
    esac
}
complete -F _exitscope exitscope
