package framework

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
)

// ContainerProcess returns the PID of the main process of a pod's running
// container on this node (the cluster's only one): the process runc started
// in the container's cgroup, whose parent is the containerd shim. The pod
// must be fresh: its status names the container ID the cgroup carries,
// which changes with every restart of the container.
func ContainerProcess(pod *corev1.Pod, container string) (int, error) {
	id, err := containerID(pod, container)
	if err != nil {
		return 0, err
	}
	procs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return 0, err
	}
	// The cgroup path ends in the container ID, below the pod's cgroup
	// (kubepods/<qos>/pod<uid>/<id> with the cgroupfs driver).
	suffix := []byte("/pod" + string(pod.UID) + "/" + id + "\n")
	var main []int
	for _, p := range procs {
		cgroup, err := os.ReadFile(filepath.Join(p, "cgroup"))
		if err != nil || !bytes.Contains(cgroup, suffix) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(p))
		if parentIsShim(pid) {
			main = append(main, pid)
		}
	}
	if len(main) != 1 {
		return 0, fmt.Errorf("want the one main process of container %s of pod %s/%s (id %.12s), found %v", container, pod.Namespace, pod.Name, id, main)
	}
	return main[0], nil
}

// KillContainer sends SIGKILL to the main process of a pod's container, a
// crash as the kernel's OOM killer or a fatal signal would make one: no
// handler runs, nothing is released. It returns the PID it killed.
func KillContainer(pod *corev1.Pod, container string) (int, error) {
	pid, err := ContainerProcess(pod, container)
	if err != nil {
		return 0, err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return 0, fmt.Errorf("kill -9 %d (container %s of pod %s/%s): %w", pid, container, pod.Namespace, pod.Name, err)
	}
	return pid, nil
}

// RestartCount is how often the kubelet restarted a pod's container, -1
// when the pod has no status of it.
func RestartCount(pod *corev1.Pod, container string) int32 {
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == container {
			return s.RestartCount
		}
	}
	return -1
}

func containerID(pod *corev1.Pod, container string) (string, error) {
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name != container {
			continue
		}
		if s.State.Running == nil {
			return "", fmt.Errorf("container %s of pod %s/%s is not running", container, pod.Namespace, pod.Name)
		}
		_, id, ok := strings.Cut(s.ContainerID, "://")
		if !ok || id == "" {
			return "", fmt.Errorf("container %s of pod %s/%s: no container ID in %q", container, pod.Namespace, pod.Name, s.ContainerID)
		}
		return id, nil
	}
	return "", fmt.Errorf("pod %s/%s has no container %s in its status", pod.Namespace, pod.Name, container)
}

// parentIsShim reports whether pid's parent is a containerd shim: the
// container's init, not a process it or anything else started in its
// cgroup (QEMU, reparented to the pod's pause process, is in the launcher
// container's cgroup too).
func parentIsShim(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	rest := stat[bytes.LastIndexByte(stat, ')')+1:]
	fields := strings.Fields(string(rest))
	if len(fields) < 2 {
		return false
	}
	comm, err := os.ReadFile(filepath.Join("/proc", fields[1], "comm"))
	return err == nil && strings.HasPrefix(string(comm), "containerd-shim")
}
