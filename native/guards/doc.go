// Package guards holds the repository's checks that span packages, as tests: the project's
// layering (graphs and the engine import the standard library and this module's own
// stdlib-only packages, nothing of a host), the walls between rooms (the product never imports
// native/lab, wasm never imports native, only tests import native/testlib; tests of the
// product may use the lab's fixtures), the public surface (every package outside an internal/
// folder is an API with a runnable Example and a row of README.md's API table, or a listed
// exception), the fuzz targets `make fuzz` finds (every func Fuzz in the tree), the one MCP tool
// layer (every MCP front, `caskg mcp`, the worker's /mcp and the gateway's, imports wasm/mcpcore
// and declares no tool of its own), the tests that must compile for WebAssembly (GOOS=wasip1),
// and the Markdown of every page (fences, headings in code, relative links and anchors, the caskg
// flags shell blocks name), and the top level (only the files and directories the brief allows;
// the rest belongs in docs/, native/, wasm/ or .ci/). Each guard fails; none only logs. They
// shell out to the go command, and the top-level guard to git, and skip when it is missing.
package guards
