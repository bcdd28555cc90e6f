package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The local cluster's nodes (docs/cluster.md "More nodes"): node 1 is the
// host's, with the control plane; `make up NODES=N` adds N-1 more, each a
// kubelet, containerd and kube-proxy in namespaces of their own on this
// machine, managed by hack/cluster/node.sh. Every process of every node
// is a process of this machine: a test sees all the QEMUs in /proc
// (QEMUProcesses) and tells their nodes apart with NodeOfProcess.

// Nodes returns the names of the cluster's nodes, the host's first, as of
// the last Up.
func (c *Cluster) Nodes() []string { return slices.Clone(c.nodes) }

// RememberedNodes is the node count a plain `make up` brings up: the last
// one asked for, 1 if none was.
func (c *Cluster) RememberedNodes() (int, error) {
	b, err := os.ReadFile(c.nodesFile)
	if errors.Is(err, os.ErrNotExist) {
		return 1, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s holds %q, not a node count", c.nodesFile, b)
	}
	return n, nil
}

// RememberNodes makes n the node count of the next plain `make up`
// without bringing anything up: a suite that brought a cluster it found
// down to more nodes leaves the count it found.
func (c *Cluster) RememberNodes(n int) error {
	return os.WriteFile(c.nodesFile, []byte(strconv.Itoa(n)+"\n"), 0o644)
}

// SetNodes brings the cluster to n nodes (`make up NODES=n`): the missing
// ones are brought up, those beyond n removed (stopped without a drain,
// their Node objects deleted). A later Up keeps n.
func (c *Cluster) SetNodes(ctx context.Context, n int) error {
	c.nodeCount = n
	return c.Up(ctx)
}

// KillNode SIGKILLs every process of an extra node at once: its kubelet,
// containerd, kube-proxy, containerd's shims and its pods' processes (its
// QEMUs), as a power loss would. Its Node object, namespaces and state
// stay; StartNode boots it again.
func (c *Cluster) KillNode(ctx context.Context, name string) error {
	return c.nodeScript(ctx, "kill", name)
}

// StopNode stops an extra node's daemons (SIGTERM, no drain), then kills
// what is left of it.
func (c *Cluster) StopNode(ctx context.Context, name string) error {
	return c.nodeScript(ctx, "stop", name)
}

// StartNode starts an extra node's daemons again, as `make up` does, and
// waits until its Node is Ready.
func (c *Cluster) StartNode(ctx context.Context, name string) error {
	return c.nodeScript(ctx, "start", name)
}

func (c *Cluster) nodeScript(ctx context.Context, verb, name string) error {
	start := time.Now()
	if err := c.stream(ctx, "hack/cluster/node.sh", verb, name); err != nil {
		return fmt.Errorf("node.sh %s %s: %w", verb, name, err)
	}
	logf("node.sh %s %s: %s", verb, name, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// NodeKubeletRoot is the kubelet's --root-dir of a node as seen from the
// host. Every node's kubelet uses the same path in its own mount
// namespace; an extra node's is its own directory bound there
// (hack/cluster/node.sh), on disk (a pod's volumes of medium Memory
// are mounts inside the node's namespace, not seen here).
func (c *Cluster) NodeKubeletRoot(node string) string {
	if node == "" || len(c.nodes) == 0 || node == c.nodes[0] {
		return c.KubeletRoot
	}
	return filepath.Join(c.nodesDir, node, "binds", strings.ReplaceAll(c.KubeletRoot, "/", "_"))
}

// NodeOfProcess names the node a process of this machine belongs to: the
// extra node whose cgroup parent (the kubelet's cgroupRoot /<node>) holds
// it, else the host's node.
func (c *Cluster) NodeOfProcess(pid int) (string, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(raw)) {
		// hierarchy-ID:controllers:/path
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, n := range c.nodes[min(1, len(c.nodes)):] {
			if parts[2] == "/"+n || strings.HasPrefix(parts[2], "/"+n+"/") {
				return n, nil
			}
		}
	}
	if len(c.nodes) == 0 {
		return "", fmt.Errorf("no nodes known: the cluster was not brought up")
	}
	return c.nodes[0], nil
}
