# eulernpu.bash: bash completion for eulernpu (installed as
# share/bash-completion/completions/eulernpu). Verbs, sub-verbs and options
# are read from the program's own --help output (once per shell and
# program), so the completion cannot drift from the client; a few option
# arguments (backends, priorities, states) are completed from fixed lists,
# files and directories otherwise.

declare -gA _eulernpu_cache

# _eulernpu_help PROG [VERB]: the help text, cached.
_eulernpu_help() {
	local key="$1|${2-}"
	if [[ -z ${_eulernpu_cache[$key]+set} ]]; then
		if [[ -n ${2-} ]]; then
			_eulernpu_cache[$key]=$("$1" "$2" --help 2>/dev/null)
		else
			_eulernpu_cache[$key]=$("$1" --help 2>/dev/null)
		fi
	fi
	printf '%s\n' "${_eulernpu_cache[$key]}"
}

# The verbs: the indented first words of the "verbs:" block.
_eulernpu_verbs() {
	_eulernpu_help "$1" | sed -n '/^verbs:/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p'
}

# Every --option a help text names.
_eulernpu_options() {
	_eulernpu_help "$@" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

# Sub-verbs of a verb: "eulernpu jobs ls|show|wait|cancel" or one
# "eulernpu cache stats" line each in its usage.
_eulernpu_subverbs() {
	_eulernpu_help "$1" "$2" | grep -oE -- "eulernpu $2 [a-z][a-z|]*" | cut -d' ' -f3 | tr '|' '\n' | sort -u
}

# 0 when OPTION takes an argument: its help line reads "--opt WORD".
_eulernpu_takes_arg() {
	_eulernpu_help "$@" | grep -qE -- "^ *(-[a-z], )?$3 [A-Za-z]"
}

_eulernpu() {
	local cur prev prog verb="" sub="" i w
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	prog=${COMP_WORDS[0]}
	COMPREPLY=()

	# the verb: the first word that is not a global option or its argument
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		--server|--cacert|--token-file|--retry|--retry-max-time) ((i++)) ;;
		-*) ;;
		*)
			if [[ -z $verb ]]; then
				verb=$w
			elif [[ -z $sub ]]; then
				sub=$w
			fi
			;;
		esac
	done

	case $prev in
	--backend) COMPREPLY=($(compgen -W "cpu_ref npu_sim zynq_ps fpga_board" -- "$cur")); return ;;
	--priority) COMPREPLY=($(compgen -W "low normal high" -- "$cur")); return ;;
	--kind) COMPREPLY=($(compgen -W "blob artifact ac" -- "$cur")); return ;;
	--state) COMPREPLY=($(compgen -W "queued running succeeded failed cancelled timed_out" -- "$cur")); return ;;
	--server) COMPREPLY=($(compgen -W "unix: http:// https://" -- "$cur")); return ;;
	--input|--name)
		[[ $verb == import ]] && return   # NAME=SHAPE, a name: nothing to complete
		;;&
	--out)
		if [[ $verb == compile || $verb == import ]]; then
			COMPREPLY=($(compgen -d -- "$cur"))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		return ;;
	--artifact) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	--cacert|--token-file) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--retry|--retry-max-time) return ;;   # a number
	-*)
		if [[ -n $verb ]] && _eulernpu_takes_arg "$prog" "$verb" "$prev"; then
			COMPREPLY=($(compgen -f -- "$cur"))
			return
		fi
		;;
	esac

	if [[ -z $verb ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$(_eulernpu_options "$prog")" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(_eulernpu_verbs "$prog")" -- "$cur"))
		fi
		return
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_eulernpu_options "$prog" "$verb") --help" -- "$cur"))
		return
	fi
	if [[ -z $sub ]]; then
		local subs
		subs=$(_eulernpu_subverbs "$prog" "$verb")
		if [[ -n $subs ]]; then
			COMPREPLY=($(compgen -W "$subs" -- "$cur"))
			return
		fi
	fi
	case $verb in
	explain|version|backends|boards|jobs|cache|daemon|models) ;;
	*) COMPREPLY=($(compgen -f -- "$cur")) ;;
	esac
}

complete -o filenames -F _eulernpu eulernpu
