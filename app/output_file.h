// Where the `tessera` subcommands write what they make (-o, --svg, --out):
// atomically for a regular file, through for a FIFO or a terminal, never
// replacing anything but a regular file.
#ifndef TESSERA_APP_OUTPUT_FILE_H_
#define TESSERA_APP_OUTPUT_FILE_H_

#include <string>

#include "tessera/status.h"

namespace tessera::cli {

// Writes `content` to `path`. "-" (or "") writes to stdout. A regular file,
// or a path where nothing is yet, is written through a temporary file beside
// it renamed into place, so a failed run never leaves a partial file (an
// existing file keeps its permissions, a new one gets 0666 less the umask).
// A FIFO or a character device
// (/dev/null, a terminal) is written through in place, never replaced. A
// symbolic link stays a link: its target is written by these same rules (a
// dangling link's target is created). A directory, a block device or a
// socket is an IoError naming the path, and so is any failure.
Status WriteOutput(const std::string& path, const std::string& content);

}  // namespace tessera::cli

#endif  // TESSERA_APP_OUTPUT_FILE_H_
