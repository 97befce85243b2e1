#include <string_view>

#include "docgen/docgen.hpp"

namespace fabscope::docgen {

namespace {

enum class ValueKind { Free, Choices, File, Dir };

ValueKind kind_of(const std::string& metavar, const std::vector<std::string>& choices) {
  if (!choices.empty()) return ValueKind::Choices;
  if (metavar == "DIR") return ValueKind::Dir;
  if (metavar == "FILE" || metavar.ends_with("FILE")) return ValueKind::File;
  return ValueKind::Free;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// A word list inside double quotes in bash: names, flags and choices are plain words, but a
// quote or a dollar from a future definition must not become shell syntax.
std::string bash_words(const std::vector<std::string>& v) {
  std::string out;
  for (char c : join(v, " ")) {
    if (c == '"' || c == '$' || c == '`' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// Inside '...' in zsh: a quote closes, escapes and reopens.
std::string zsh_quote(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out;
}

// An _arguments description in [...]: one line, brackets and backslashes escaped.
std::string zsh_desc(const std::string& help) {
  std::string out;
  for (char c : help) {
    if (c == '\n') c = ' ';
    if (c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return zsh_quote(out);
}

// An _arguments message or _describe entry: colons separate fields there.
std::string zsh_field(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') c = ' ';
    if (c == ':' || c == '\\') out += '\\';
    out += c;
  }
  return zsh_quote(out);
}

std::string zsh_action(ValueKind k, const std::vector<std::string>& choices) {
  switch (k) {
    case ValueKind::Choices: {
      std::string words;
      for (const auto& c : choices) {
        std::string w;
        for (char ch : c) {
          if (ch == ' ' || ch == '(' || ch == ')' || ch == '\\' || ch == ':') w += '\\';
          w += ch;
        }
        words += (words.empty() ? "" : " ") + w;
      }
      return "(" + zsh_quote(words) + ")";
    }
    case ValueKind::File: return "_files";
    case ValueKind::Dir: return "_files -/";
    case ValueKind::Free: return " ";
  }
  return " ";
}

std::string function_name(const std::string& command) {
  std::string out = "_fabscope_";
  for (char c : command) out += (c == ' ' || c == '-') ? '_' : c;
  return out;
}

std::vector<std::string> subcommands_of(const CommandDoc& c) { return c.spec.subcommands; }

}  // namespace

std::string render_bash(const std::vector<CommandDoc>& all, const std::string& version) {
  std::vector<std::string> top;
  for (const auto& c : all)
    if (c.name.find(' ') == std::string::npos) top.push_back(c.name);

  std::string opts, valopts, subs, values, positionals;
  for (const auto& c : all) {
    std::vector<std::string> names, takes;
    for (const auto& o : c.spec.options) {
      for (const auto& n : o.names) {
        names.push_back(n);
        if (o.takes_value) takes.push_back(n);
      }
      if (!o.takes_value) continue;
      const std::string pattern = "\"" + c.name + " " + join(o.names, "\"|\"" + c.name + " ") + "\"";
      switch (kind_of(o.metavar, o.choices)) {
        case ValueKind::Choices:
          values += "    " + pattern + ") _fabscope_words \"" + bash_words(o.choices) + "\" ;;\n";
          break;
        case ValueKind::File: values += "    " + pattern + ") _fabscope_paths -f ;;\n"; break;
        case ValueKind::Dir: values += "    " + pattern + ") _fabscope_paths -d ;;\n"; break;
        case ValueKind::Free: break;  // a number, a size, an address: nothing to offer
      }
    }
    opts += "    \"" + c.name + "\") echo \"" + bash_words(names) + "\" ;;\n";
    if (!takes.empty()) valopts += "    \"" + c.name + "\") echo \"" + bash_words(takes) + "\" ;;\n";
    if (!c.spec.subcommands.empty())
      subs += "    \"" + c.name + "\") echo \"" + bash_words(subcommands_of(c)) + "\" ;;\n";
    for (std::size_t i = 0; i < c.spec.positionals.size(); ++i) {
      const auto& p = c.spec.positionals[i];
      const bool last_many = c.spec.positional_many && i + 1 == c.spec.positionals.size();
      const std::string pattern =
          "\"" + c.name + " " + std::to_string(i) + "\"" + (last_many ? "|\"" + c.name + " *\"" : "");
      switch (kind_of(p.metavar, p.choices)) {
        case ValueKind::Choices:
          positionals += "    " + pattern + ") _fabscope_words \"" + bash_words(p.choices) + "\" ;;\n";
          break;
        case ValueKind::File: positionals += "    " + pattern + ") _fabscope_paths -f ;;\n"; break;
        case ValueKind::Dir: positionals += "    " + pattern + ") _fabscope_paths -d ;;\n"; break;
        case ValueKind::Free: break;
      }
    }
  }

  std::string out;
  out += "# bash completion for fabscope                                  -*- shell-script -*-\n";
  out += "# Generated by fabscope-docgen from the command-line definitions of fabscope " + version +
         "; do not edit.\n";
  out += "# Self-contained: works with or without the bash-completion package.\n\n";
  out += "_fabscope_words() {\n  local IFS=$' \\t\\n'\n"
         "  COMPREPLY+=($(compgen -W \"$1\" -- \"$_fabscope_cur\"))\n}\n\n";
  out += "_fabscope_paths() {\n  local IFS=$'\\n'\n"
         "  compopt -o filenames 2>/dev/null\n"
         "  COMPREPLY+=($(compgen \"$1\" -- \"$_fabscope_cur\"))\n}\n\n";
  out += "# Every option of a command.\n_fabscope_options() {\n  case \"$1\" in\n" + opts +
         "  esac\n}\n\n";
  out += "# The options of a command that take a value.\n_fabscope_value_options() {\n  case \"$1\" in\n" +
         valopts + "  esac\n}\n\n";
  out += "# Words that select another parser right after a command.\n_fabscope_subcommands() {\n"
         "  case \"$1\" in\n" + subs + "  esac\n}\n\n";
  out += "# Values of an option (\"command option\"); free values complete nothing.\n"
         "_fabscope_option_value() {\n  case \"$1\" in\n" + values + "  esac\n}\n\n";
  out += "# Positional arguments (\"command index\").\n_fabscope_positional() {\n  case \"$1\" in\n" +
         positionals + "  esac\n}\n\n";
  out += R"SH(_fabscope() {
  local _fabscope_cur=${COMP_WORDS[COMP_CWORD]}
  local cword=$COMP_CWORD i w
  local -a words=("${COMP_WORDS[@]}")
  COMPREPLY=()
  if (( cword == 1 )); then
    _fabscope_words ")SH" + bash_words(top) + R"SH("
    return 0
  fi
  local cmd=${words[1]} first=2
  if (( cword > 2 )) && [[ " $(_fabscope_subcommands "$cmd") " == *" ${words[2]} "* ]]; then
    cmd="$cmd ${words[2]}"
    first=3
  fi
  local takes=" $(_fabscope_value_options "$cmd") "
  # The option whose value is being completed: --opt VALUE, or --opt=VALUE (which bash splits
  # at '=' when '=' is in COMP_WORDBREAKS, as it is by default).
  local opt=""
  if [[ $_fabscope_cur == "=" ]]; then
    opt=${words[cword-1]}
    _fabscope_cur=""
  elif (( cword - 2 >= first )) && [[ ${words[cword-1]} == "=" ]]; then
    opt=${words[cword-2]}
  elif [[ $_fabscope_cur == --*=* ]]; then
    opt=${_fabscope_cur%%=*}
    _fabscope_cur=${_fabscope_cur#*=}
  elif (( cword - 1 >= first )) && [[ $takes == *" ${words[cword-1]} "* ]]; then
    opt=${words[cword-1]}
  fi
  if [[ -n $opt ]]; then
    [[ $takes == *" $opt "* ]] && _fabscope_option_value "$cmd $opt"
    return 0
  fi
  if [[ $_fabscope_cur == -* ]]; then
    _fabscope_words "$(_fabscope_options "$cmd")"
    return 0
  fi
  # Which positional argument this is: words that are neither options nor their values.
  local n=0
  for ((i = first; i < cword; i++)); do
    w=${words[i]}
    if [[ $w == "=" ]]; then
      ((i++))
    elif [[ $w == -* ]]; then
      [[ $w != *=* && $takes == *" $w "* ]] && [[ ${words[i+1]} != "=" ]] && ((i++))
    else
      ((n++))
    fi
  done
  if (( cword == 2 )); then
    _fabscope_words "$(_fabscope_subcommands "$cmd")"
  fi
  _fabscope_positional "$cmd $n"
  return 0
}
complete -F _fabscope fabscope
)SH";
  return out;
}

std::string render_zsh(const std::vector<CommandDoc>& all, const std::string& version) {
  std::string out = "#compdef fabscope\n";
  out += "# zsh completion for fabscope. Generated by fabscope-docgen from the command-line\n"
         "# definitions of fabscope " + version + "; do not edit.\n\n";
  for (const auto& c : all) {
    out += function_name(c.name) + "() {\n  _arguments -S : \\\n";
    for (const auto& o : c.spec.options) {
      std::string spec;
      if (o.repeat) spec += "'*'";
      else if (o.names.size() > 1) spec += "'(" + join(o.names, " ") + ")'";
      else if (o.key == "help") spec += "'(- *)'";
      std::vector<std::string> forms;
      for (const auto& n : o.names) forms.push_back(n + (o.takes_value && n.rfind("--", 0) == 0 ? "=" : ""));
      spec += forms.size() > 1 ? "{" + join(forms, ",") + "}" : forms.front();
      spec += "'[" + zsh_desc(o.help) + "]";
      if (o.takes_value)
        spec += ":" + zsh_field(o.metavar) + ":" + zsh_action(kind_of(o.metavar, o.choices), o.choices);
      spec += "'";
      out += "    " + spec + " \\\n";
    }
    for (std::size_t i = 0; i < c.spec.positionals.size(); ++i) {
      const auto& p = c.spec.positionals[i];
      const bool many = c.spec.positional_many && i + 1 == c.spec.positionals.size();
      const std::string pos = many ? "*" : std::to_string(i + 1);
      out += "    '" + pos + "::" + zsh_field(p.metavar) + ":" +
             zsh_action(kind_of(p.metavar, p.choices), p.choices) + "' \\\n";
    }
    if (!c.spec.subcommands.empty() && c.spec.positionals.empty())
      out += "    '1::subcommand:(" + zsh_quote(join(c.spec.subcommands, " ")) + ")' \\\n";
    out += "    && return 0\n  return 1\n}\n\n";
  }
  out += "_fabscope() {\n  local -a commands\n  commands=(\n";
  for (const auto& c : all)
    if (c.name.find(' ') == std::string::npos)
      out += "    '" + zsh_field(c.name) + ":" + zsh_field(c.summary) + "'\n";
  out += "  )\n  if (( CURRENT == 2 )); then\n    _describe -t commands 'fabscope command' commands\n"
         "    return\n  fi\n  local cmd=${words[2]}\n";
  // A subcommand ("env lint") takes over once it is a whole word.
  out += "  if (( CURRENT > 3 )); then\n    case \"$cmd ${words[3]}\" in\n";
  for (const auto& c : all)
    if (c.name.find(' ') != std::string::npos)
      out += "      '" + zsh_quote(c.name) + "') shift 2 words; (( CURRENT -= 2 )); " +
             function_name(c.name) + "; return ;;\n";
  out += "    esac\n  fi\n  shift words\n  (( CURRENT-- ))\n  case $cmd in\n";
  for (const auto& c : all)
    if (c.name.find(' ') == std::string::npos)
      out += "    '" + zsh_quote(c.name) + "') " + function_name(c.name) + " ;;\n";
  out += "    *) _message \"unknown fabscope command: $cmd\" ;;\n  esac\n}\n\n";
  out += "if [ \"$funcstack[1]\" = \"_fabscope\" ]; then\n  _fabscope \"$@\"\nelse\n"
         "  compdef _fabscope fabscope\nfi\n";
  return out;
}

}  // namespace fabscope::docgen
