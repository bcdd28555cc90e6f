// Command pause is the sandbox container of the local cluster's pods: it
// holds the pod's namespaces, reaps the zombies of a shared PID namespace
// and exits on SIGINT or SIGTERM, like Kubernetes' pause image, which cannot
// be pulled here. hack/cluster/images.sh builds it static into
// localhost/pause:dev, containerd's sandbox image.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		reap()
	}
}

// reap collects every exited child; signals coalesce, so one SIGCHLD may
// stand for several.
func reap() {
	for {
		pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
