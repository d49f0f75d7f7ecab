// Command gen writes the arena's shared test data (see package arenadata) into a directory:
//
//	go run ./arenadata/gen DIR
package main

import (
	"fmt"
	"os"

	"github.com/arenabot/arenabot/arenadata"
)

func main() {
	if len(os.Args) != 2 || os.Args[1] == "" || os.Args[1][0] == '-' {
		fmt.Fprintln(os.Stderr, "usage: go run ./arenadata/gen DIR")
		os.Exit(2)
	}
	if err := arenadata.Write(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %d files to %s\n", len(arenadata.Files()), os.Args[1])
}
