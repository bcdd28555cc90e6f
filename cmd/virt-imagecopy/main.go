// virt-imagecopy is the static tool of a launcher pod's file-only images:
// `install <dir>` puts itself into the pod's tools volume (the compute
// container's postStart hook), `hold <src> <record> [<src> <record>...]
// <launcher>` keeps the kernel-boot files or a container disk in place for
// the launcher. Build it with CGO_ENABLED=0: it runs in images without libc.
package main

import (
	"fmt"
	"os"

	"kubevirt.dev/virt/launcher/imagecopy"
	"kubevirt.dev/virt/launcher/termination"
)

func main() {
	if err := imagecopy.Run(os.Args[1:]); err != nil {
		msg := fmt.Sprintf("virt-imagecopy: %v", err)
		fmt.Fprintln(os.Stderr, msg)
		// kubectl describe pod shows it as the container's message.
		termination.Write(msg)
		os.Exit(1)
	}
}
