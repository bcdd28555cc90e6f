// Package proc is what the bench reads of processes: their memory and CPU
// time, their names, the processes of a pod (by its cgroup) and of a
// command line. /proc is parsed by github.com/prometheus/procfs; this
// package only names what the bench needs of it. Linux only; read-only.
package proc
