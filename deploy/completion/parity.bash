# SPDX-License-Identifier: Apache-2.0
# Bash completion for parity: commands, subcommands and options, read from the installed
# binary's own --help (so it never lists an option the binary lacks), once per command and shell.
# Installed by the Debian package as /usr/share/bash-completion/completions/parity; from a
# checkout: source deploy/completion/parity.bash

# Words of a help text's section: the first word of each indented line after HEADING.
_parity_section() {
  local heading=$1
  awk -v h="$heading" '
    $0 ~ "^" h ":" { on = 1; next }
    on && /^[^ ]/ { on = 0 }
    on && /^  +[a-z]/ { print $1 }' 
}

# The --options a help text names.
_parity_options() {
  grep -o -- '--[a-z][a-z0-9-]*' | sort -u
}

declare -A _parity_help_cache

_parity_help() {
  local key="_$*"
  if [[ -z ${_parity_help_cache[$key]+set} ]]; then
    _parity_help_cache[$key]=$("${_parity_bin:-parity}" "$@" --help 2>/dev/null)
  fi
  printf '%s\n' "${_parity_help_cache[$key]}"
}

_parity() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  local prev=${COMP_WORDS[COMP_CWORD-1]}
  _parity_bin=${COMP_WORDS[0]}
  COMPREPLY=()

  # The command path typed so far: parity CMD [SUBCMD], options and their values skipped.
  local path=() word i
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    [[ $word == -* ]] && break
    local subs
    subs=$(_parity_help "${path[@]}" | _parity_section "$([[ ${#path[@]} -eq 0 ]] && echo Commands || echo Subcommands)")
    if grep -qx -- "$word" <<<"$subs"; then path+=("$word"); else break; fi
  done

  case $prev in
    -o|--out|--json|--csv|--db|--plan|--space|--sign|--pubkey|--env|--bundle|--python|--rules)
      COMPREPLY=($(compgen -f -- "$cur"))
      return
      ;;
  esac

  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_parity_help "${path[@]}" | _parity_options)" -- "$cur"))
    return
  fi
  local heading=Subcommands
  [[ ${#path[@]} -eq 0 ]] && heading=Commands
  local words
  words=$(_parity_help "${path[@]}" | _parity_section "$heading")
  if [[ -n $words ]]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}

complete -o filenames -F _parity parity
