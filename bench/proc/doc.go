// Package proc reads the memory of processes from /proc and finds the
// processes of a pod by its cgroup. Linux only; read-only.
package proc
