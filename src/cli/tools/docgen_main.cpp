// fabscope-docgen OUTDIR: writes the manual pages (OUTDIR/man1/*.1) and the bash and zsh
// completion scripts (OUTDIR/bash-completion/fabscope, OUTDIR/zsh/_fabscope) of every command
// in the registry. Build-time tool, not installed: each command is run under
// core::DescribeScope, so its own ArgParser definitions are what the files are made from.
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "core/args.hpp"
#include "docgen/docgen.hpp"

namespace fs = std::filesystem;
using fabscope::docgen::CommandDoc;

namespace {

// Runs the command with argv {words..., "--help"} under a DescribeScope.
fabscope::core::ParserSpec describe(const fabscope::cli::Command& cmd, std::vector<std::string> words) {
  words.push_back("--help");
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  fabscope::core::DescribeScope scope;
  cmd.run(static_cast<int>(words.size()), argv.data());
  if (scope.specs.empty()) {
    std::string name;
    for (std::size_t i = 0; i + 1 < words.size(); ++i) name += (i ? " " : "") + words[i];
    throw std::runtime_error("'" + name + "' parsed no flags through core::ArgParser: it cannot be described");
  }
  return scope.specs.front();
}

std::vector<CommandDoc> describe_all() {
  std::vector<CommandDoc> docs;
  const auto* cmds = fabscope::cli::commands();
  for (int i = 0; i < fabscope::cli::command_count(); ++i) {
    CommandDoc d{cmds[i].name, cmds[i].summary, describe(cmds[i], {cmds[i].name})};
    const auto subs = d.spec.subcommands;
    docs.push_back(d);
    for (const auto& sub : subs)
      docs.push_back({std::string(cmds[i].name) + " " + sub, "", describe(cmds[i], {cmds[i].name, sub})});
  }
  return docs;
}

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  if (!f.flush()) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || std::string(argv[1]).rfind("-", 0) == 0) {
    std::cerr << "Usage: fabscope-docgen OUTDIR\n"
                 "Writes OUTDIR/man1/*.1, OUTDIR/bash-completion/fabscope and OUTDIR/zsh/_fabscope.\n";
    return 3;
  }
  try {
    const fs::path out = argv[1];
    const std::string version = FABSCOPE_VERSION;
    const auto docs = describe_all();
    // Pages of commands that left the registry must not linger.
    if (fs::exists(out / "man1"))
      for (const auto& e : fs::directory_iterator(out / "man1"))
        if (e.path().extension() == ".1") fs::remove(e.path());
    const fabscope::docgen::TopDoc top{fabscope::cli::kUsage, fabscope::cli::kSummary,
                                       fabscope::cli::kTrailer};
    write(out / "man1" / "fabscope.1", fabscope::docgen::render_top_man(top, docs, version));
    for (const auto& d : docs)
      write(out / "man1" / (fabscope::docgen::man_name(d.name) + ".1"),
            fabscope::docgen::render_man(d, docs, version));
    write(out / "bash-completion" / "fabscope", fabscope::docgen::render_bash(docs, version));
    write(out / "zsh" / "_fabscope", fabscope::docgen::render_zsh(docs, version));
  } catch (const std::exception& e) {
    std::cerr << "fabscope-docgen: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
