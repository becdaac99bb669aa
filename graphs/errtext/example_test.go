package errtext_test

import (
	"errors"
	"fmt"

	"github.com/caskg/caskg/graphs/errtext"
)

// The texts are those of the fmt verbs, without fmt in the WebAssembly module.
func Example() {
	base := errtext.New("section too short")
	err := errtext.Prefix("graphs: ", errtext.Wrap(base, " at byte "+errtext.Itoa(40)))
	fmt.Println(err)
	fmt.Println(errors.Is(err, base))
	fmt.Println(errtext.Quote("tab\there"), errtext.Hex8(0xCAFE), errtext.Ftoa(0.25))
	// Output:
	// graphs: section too short at byte 40
	// true
	// "tab\there" 0000cafe 0.25
}
