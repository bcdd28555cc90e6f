// Package expectation remembers, per controller key, the creations and
// deletions a controller has asked the API for but not yet seen in its
// informer caches. A controller that acts only when its expectations are
// satisfied never acts twice on the same stale cache, which is what keeps a
// VMI at exactly one launcher pod while watch events lag behind writes.
//
// It is the idea of k8s.io/kubernetes/pkg/controller's ControllerExpectations
// in a form small enough to read at once. It imports nothing of the platform.
package expectation
