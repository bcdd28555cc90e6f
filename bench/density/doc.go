// Package density starts as many VMIs of the test guest at once as the node
// has room for (up to a number asked for, 100 by default), and the same
// number of domains under raw libvirt, and reports each batch's
// POST → Running and → guest marker times unbucketed, with the memory the
// node gave each guest.
//
// How many fit is the scheduler's arithmetic, not a guess: a probe VMI's
// launcher pod gives the requests of one pod, the node's allocatable
// resources minus what its other pods request give the room.
package density
