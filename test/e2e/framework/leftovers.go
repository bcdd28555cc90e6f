package framework

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// Leftovers lists what of the local cluster still exists on the host: its
// daemons (Kubernetes binaries or containerd working on its state
// directory), containerd shims of its socket, processes in the pods'
// cgroups, mounts under its state directory, its bridge, and the extra
// nodes' links, network namespaces and cgroups. After `make down` the list
// must be empty.
func (c *Cluster) Leftovers() ([]string, error) {
	var left []string
	procs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return nil, err
	}
	for _, p := range procs {
		exe, err := os.Readlink(filepath.Join(p, "exe"))
		if err != nil {
			continue // gone, a kernel thread, or a zombie
		}
		raw, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil {
			continue
		}
		cmdline := string(bytes.ReplaceAll(raw, []byte{0}, []byte{' '}))
		ours := strings.HasPrefix(exe, c.kubeBin+"/") || strings.HasPrefix(exe, "/usr/bin/containerd")
		switch {
		case ours && strings.Contains(cmdline, c.State+"/"):
			left = append(left, fmt.Sprintf("process %s: %s", filepath.Base(p), exe))
		case strings.Contains(cmdline, "containerd-shim") && strings.Contains(cmdline, "-address "+c.containerdSock+" "):
			left = append(left, fmt.Sprintf("containerd shim %s", filepath.Base(p)))
		}
	}
	cgroupProcs, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods")
	for _, dir := range cgroupProcs {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.Name() != "cgroup.procs" {
				return nil
			}
			data, _ := os.ReadFile(path)
			for _, pid := range strings.Fields(string(data)) {
				left = append(left, fmt.Sprintf("process %s in pod cgroup %s", pid, filepath.Dir(path)))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	mounts, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer mounts.Close()
	sc := bufio.NewScanner(mounts)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 4 && (f[4] == c.State || strings.HasPrefix(f[4], c.State+"/")) {
			left = append(left, "mount "+f[4])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if _, err := net.InterfaceByName(c.Bridge); err == nil {
		left = append(left, "bridge "+c.Bridge)
	}
	// The extra nodes' (hack/cluster/node.sh): their host links (the
	// bridge virtdevn0, a veth virtdevnK each), network namespaces and
	// cgroup parents. Their processes are among the daemons above.
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	for _, i := range ifs {
		if strings.HasPrefix(i.Name, "virtdevn") {
			left = append(left, "node link "+i.Name)
		}
	}
	first := "virt-node" // NODE_NAME, the extra nodes' names' prefix
	if len(c.nodes) > 0 {
		first = c.nodes[0]
	}
	netns, _ := filepath.Glob("/run/netns/" + first + "-*")
	for _, n := range netns {
		left = append(left, "node network namespace "+filepath.Base(n))
	}
	cgroups, _ := filepath.Glob("/sys/fs/cgroup/*/" + first + "-*")
	for _, d := range cgroups {
		left = append(left, "node cgroup "+d)
	}
	return left, nil
}
