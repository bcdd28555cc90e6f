// Command mkimage writes a container image as a docker-archive tarball that
// `ctr images import` (or `docker load`) accepts, without a registry or a
// daemon. The local cluster's images are built with it; see image.Options.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"kubevirt.dev/virt/hack/mkimage/image"
)

func main() {
	var o image.Options
	o.AddFlags(pflag.CommandLine)
	pflag.Parse()
	id, err := image.Write(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
	// The image ID (config digest) lets callers tell images apart.
	fmt.Println(id)
}
