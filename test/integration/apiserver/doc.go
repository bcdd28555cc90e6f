// Package apiserver tests virt-apiserver as a whole: the real server code
// in-process with its embedded etcd, exercised through the generated
// clientset the platform's own components use.
package apiserver
