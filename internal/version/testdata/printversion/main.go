// Command printversion prints version.Get as JSON: the test builds it with
// the Makefile's -ldflags to check the -X names reach the variables.
package main

import (
	"encoding/json"
	"os"

	"github.com/streambench/streambench-operator/internal/version"
)

func main() { _ = json.NewEncoder(os.Stdout).Encode(version.Get()) }
