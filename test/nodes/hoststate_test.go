package nodes

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"kubevirt.dev/virt/test/e2e/framework"
)

// hostState is what the local cluster may change on the host, by kind,
// each a sorted list of lines: what `make down` must put back.
type hostState map[string][]string

// The host paths where the cluster's components mount things (docs/cluster.md
// "Files") besides its state directory; mounts elsewhere are someone
// else's (a build's chroot), unless they are namespaces or overlays.
var clusterMountRoots = []string{"/run/netns", "/var/lib/kubelet", "/run/containerd", "/var/lib/cni", "/var/log/containers", "/var/lib/virt"}

// snapshotHost records the host's network namespaces, links, routes, the
// cluster's mounts, the cgroups below each hierarchy's root, the cluster's
// processes and the iptables rules of Kubernetes and CNI.
func snapshotHost(c *framework.Cluster) (hostState, error) {
	s := hostState{}

	if entries, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range entries {
			s.add("netns", e.Name())
		}
	}
	s.add("netns", fmt.Sprintf("/run/netns exists: %t", exists("/run/netns")))

	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	for _, i := range ifs {
		s.add("link", i.Name)
	}

	out, err := exec.Command("ip", "-o", "route", "show", "table", "all").Output()
	if err != nil {
		return nil, fmt.Errorf("ip route: %w", err)
	}
	for line := range strings.Lines(string(out)) {
		// Routes of the cluster's ranges and devices only: a default
		// route renewed by DHCP meanwhile is not the cluster's doing.
		if strings.Contains(line, "198.18.") || strings.Contains(line, "198.19.") || strings.Contains(line, "virtdev") {
			s.add("route", strings.TrimSpace(line))
		}
	}

	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	for line := range strings.Lines(string(mountinfo)) {
		// id parent major:minor root mountpoint options ... - fstype source ...
		pre, post, _ := strings.Cut(line, " - ")
		f, pf := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(pf) < 1 {
			continue
		}
		point, fstype := f[4], pf[0]
		if under(point, c.State) || slices.ContainsFunc(clusterMountRoots, func(r string) bool { return under(point, r) }) ||
			fstype == "nsfs" || fstype == "overlay" {
			s.add("mount", point+" "+fstype)
		}
	}

	hierarchies, _ := filepath.Glob("/sys/fs/cgroup/*")
	for _, h := range hierarchies {
		entries, err := os.ReadDir(h)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() {
				s.add("cgroup", filepath.Join(h, e.Name()))
			}
		}
	}

	kubeBin := filepath.Dir(c.KubectlPath)
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		exe, err := os.Readlink(filepath.Join(p, "exe"))
		if err != nil {
			continue
		}
		cg, _ := os.ReadFile(filepath.Join(p, "cgroup"))
		ours := strings.HasPrefix(exe, kubeBin+"/") || strings.HasPrefix(exe, "/usr/bin/containerd") ||
			bytes.Contains(cg, []byte(":/kubepods")) || bytes.Contains(cg, []byte(":/virt-node-"))
		if ours {
			s.add("process", exe+" (pid "+filepath.Base(p)+")")
		}
	}

	for _, ipt := range []string{"iptables-save", "ip6tables-save"} {
		out, err := exec.Command(ipt).Output()
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(out)) {
			if strings.Contains(line, "KUBE-") || strings.Contains(line, "CNI-") {
				s.add("iptables", ipt+": "+strings.TrimSpace(line))
			}
		}
	}
	for k := range s {
		slices.Sort(s[k])
	}
	return s, nil
}

func (s hostState) add(kind, line string) { s[kind] = append(s[kind], line) }

// diff lists what differs between two records, "-" for a line only in s
// and "+" for one only in after; empty when they are equal.
func (s hostState) diff(after hostState) string {
	var b strings.Builder
	kinds := []string{"netns", "link", "route", "mount", "cgroup", "process", "iptables"}
	for _, k := range kinds {
		for _, l := range s[k] {
			if !slices.Contains(after[k], l) {
				fmt.Fprintf(&b, "  %s - %s\n", k, l)
			}
		}
		for _, l := range after[k] {
			if !slices.Contains(s[k], l) {
				fmt.Fprintf(&b, "  %s + %s\n", k, l)
			}
		}
	}
	return b.String()
}

func under(path, root string) bool { return path == root || strings.HasPrefix(path, root+"/") }

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
