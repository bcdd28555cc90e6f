// Package finalizer removes the platform's finalizers from objects without
// racing the writers of other fields: removal is a merge patch of
// metadata.finalizers that carries the resourceVersion the decision was made
// on, so a decision taken on a stale cache fails with a conflict instead of
// releasing an object whose state has moved on.
//
// virt-controller and virt-handler both remove finalizers through it. It must
// not import controllers/ or node/.
package finalizer
