// The long help texts (footers) of `tessera plan` and `tessera compare`:
// what the commands do, their defaults and examples.
#ifndef TESSERA_APP_HELP_TEXT_H_
#define TESSERA_APP_HELP_TEXT_H_

namespace tessera::cli {

extern const char* const kPlanHelp;
extern const char* const kCompareHelp;

}  // namespace tessera::cli

#endif  // TESSERA_APP_HELP_TEXT_H_
