// Package registrytest gives registry tests a real etcd and the options to
// build a store on it, the way Kubernetes' own registry tests do. Test code
// only.
package registrytest
