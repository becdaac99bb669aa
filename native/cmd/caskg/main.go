// Command caskg builds counterfactual-causal skill graphs from skill libraries and retrieves
// compact skill bundles for agent tasks. See 'caskg help'.
package main

import (
	"os"

	"github.com/caskg/caskg/native/internal/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr))
}
