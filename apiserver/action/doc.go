// Package action serves the lifecycle actions of virt-apiserver's
// resources (virtualmachines/NAME/start, stop, restart;
// virtualmachineinstances/NAME/pause, ...): a PUT whose body is one of
// KubeVirt's option types, answered with a metav1.Status.
//
// They are rest.Connecters restricted to PUT, as pods/exec is one for GET
// and POST, and not rest.Updaters: k8s.io/apiserver's update handler
// requires the body to carry metadata.name equal to the URL's, and
// KubeVirt's option bodies have no metadata. RBAC still sees the verb of
// the method (update), discovery lists it, and admission sees a CONNECT of
// the subresource.
package action
