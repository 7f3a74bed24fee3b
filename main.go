// Command seedance finds and prices wasted GPU capacity.
package main

import (
	"os"

	"github.com/seedance/seedance/cmd"
)

func main() {
	os.Exit(int(cmd.Main()))
}
