// Command upstream fetches a pinned upstream archive (internal/upstream)
// and prints the path of its checked copy:
//
//	go run ./hack/upstream fetch strimzi-1.2.0-src.tar.gz
//
// from upstream, or from $STREAMBENCH_MIRROR/<name> where that is set (a
// machine that cannot reach upstream). `digest NAME FILE` prints a file's
// tree digest under NAME's pin, to pin a new version.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"

	"github.com/streambench/streambench-operator/internal/upstream"
)

func main() {
	dir := flag.String("dir", "bin/upstream", "the cache directory")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: upstream [-dir DIR] fetch NAME | digest NAME FILE")
		fmt.Fprintln(os.Stderr, "pinned:", names())
	}
	flag.Parse()
	if err := run(flag.Args(), *dir); err != nil {
		fmt.Fprintln(os.Stderr, "upstream:", err)
		os.Exit(1)
	}
}

func run(args []string, dir string) error {
	if len(args) < 2 {
		flag.Usage()
		return fmt.Errorf("want a command and a name")
	}
	a, ok := upstream.Archives[args[1]]
	if !ok {
		return fmt.Errorf("%s is not pinned (pinned: %v)", args[1], names())
	}
	switch {
	case args[0] == "fetch" && len(args) == 2:
		path, err := upstream.Fetch(context.Background(), a, dir, os.Getenv(upstream.MirrorEnv))
		if err != nil {
			return err
		}
		fmt.Println(path)
		return nil
	case args[0] == "digest" && len(args) == 3:
		f, err := os.Open(args[2])
		if err != nil {
			return err
		}
		defer f.Close()
		d, err := a.TreeDigest(f)
		if err != nil {
			return err
		}
		fmt.Println(d)
		return nil
	}
	flag.Usage()
	return fmt.Errorf("unknown command %v", args)
}

func names() []string {
	var n []string
	for k := range upstream.Archives {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}
