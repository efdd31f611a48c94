// Package controller is the cluster side of the mig.tessera.io driver: it
// publishes every node's MIG devices as ResourceSlices and, in steered mode,
// publishes only what Tessera's policy would hand out next.
//
// It watches Nodes (their GPUs come from the annotation the node plugin
// writes, AnnotationGPUs) and ResourceClaims. Each new allocation of one of
// its devices and each release (a claim deallocated or deleted) is appended
// to an ordered log. After every change it sends the nodes and the log to
// `tessera serve` (package steer), which replays the log through the policy
// and answers the next placement of each profile; the controller then
// publishes, per node, the devices allocated now plus the offered ones, so
// the scheduler's allocator can only take the policy's choice. With
// PublishAll it publishes every legal placement instead (the allocator
// chooses, as NVIDIA's DynamicMIG driver leaves it).
//
// The log lives in memory. A restarted controller rebuilds it from the
// allocated claims (oldest first); the policy adopts placements it would not
// have chosen, so nothing is lost but the policy's own history.
package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/klog/v2"

	"tessera.local/dra/internal/slices"
	"tessera.local/dra/internal/steer"
)

// AnnotationGPUs is the Node annotation holding the node's MIG GPUs as a
// JSON list of slices.GPU, written by the node plugin from NVML.
const AnnotationGPUs = "mig.tessera.io/gpus"

// Options configure a Controller.
type Options struct {
	Kube       kubernetes.Interface
	Steer      *steer.Client
	GPU        string // catalog model of every node's GPUs, "a100-80gb"
	Policy     string // a `tessera replay` policy
	PublishAll bool   // publish every legal placement, no steering
	Resync     time.Duration
}

// Status is what the controller has done, for /status and tests.
type Status struct {
	Mode      string        `json:"mode"` // "steered" or "all"
	Nodes     int           `json:"nodes"`
	Events    int           `json:"events"`    // the log's length
	Allocated int           `json:"allocated"` // devices allocated now
	Offers    []steer.Offer `json:"offers"`
	Followed  int           `json:"followed"`
	Adopted   int           `json:"adopted"`
	Syncs     int           `json:"syncs"`
	LastError string        `json:"last_error,omitempty"`
}

// allocation is one device of a claim, as the log keys it.
type allocation struct {
	key     string // "<claim UID>/<device>"
	node    string
	gpu     int
	profile string
	start   int
}

// Controller: see the package comment. Run it with Run.
type Controller struct {
	opts  Options
	queue workqueue.TypedRateLimitingInterface[string]

	mu        sync.Mutex
	nodes     map[string][]slices.GPU
	allocated map[types.UID][]allocation // by claim
	log       []steer.Event
	geometry  *steer.Geometry
	ready     bool // the claims present at start are in the log
	status    Status
}

// New checks the options.
func New(opts Options) (*Controller, error) {
	if opts.Kube == nil || opts.Steer == nil {
		return nil, fmt.Errorf("controller: a Kubernetes client and a Tessera client are needed")
	}
	if opts.GPU == "" || opts.Policy == "" {
		return nil, fmt.Errorf("controller: the GPU model and the policy are needed")
	}
	mode := "steered"
	if opts.PublishAll {
		mode = "all"
	}
	return &Controller{
		opts:      opts,
		queue:     workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		nodes:     map[string][]slices.GPU{},
		allocated: map[types.UID][]allocation{},
		status:    Status{Mode: mode},
	}, nil
}

// Status returns a copy of what the controller has done.
func (c *Controller) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.status
	s.Offers = append([]steer.Offer(nil), s.Offers...)
	return s
}

// Run watches the cluster and publishes until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	// The geometry first: claims are read by their devices' names.
	first, err := c.opts.Steer.Offers(ctx, &steer.Request{GPU: c.opts.GPU, Policy: c.opts.Policy})
	if err != nil {
		return err
	}
	c.geometry = &first.Geometry
	factory := informers.NewSharedInformerFactory(c.opts.Kube, c.opts.Resync)
	nodeInformer := factory.Core().V1().Nodes().Informer()
	claimInformer := factory.Resource().V1().ResourceClaims().Informer()
	enqueue := func() { c.queue.Add("sync") }
	nodeHandler, err := nodeInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.nodeChanged(ctx, obj, false); enqueue() },
		UpdateFunc: func(_, obj any) { c.nodeChanged(ctx, obj, false); enqueue() },
		DeleteFunc: func(obj any) { c.nodeChanged(ctx, obj, true); enqueue() },
	})
	if err != nil {
		return err
	}
	claimHandler, err := claimInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.claimChanged(obj, false); enqueue() },
		UpdateFunc: func(_, obj any) { c.claimChanged(obj, false); enqueue() },
		DeleteFunc: func(obj any) { c.claimChanged(obj, true); enqueue() },
	})
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	// Every node handed to its handler before the claims are read.
	if !cache.WaitForCacheSync(ctx.Done(), nodeHandler.HasSynced, claimHandler.HasSynced) {
		return fmt.Errorf("controller: the Node and ResourceClaim informers did not sync")
	}
	c.adoptExisting(claimInformer.GetStore())

	publisher, err := resourceslice.StartController(ctx, resourceslice.Options{
		DriverName: slices.DriverName,
		KubeClient: c.opts.Kube,
		Resources:  &resourceslice.DriverResources{Pools: map[string]resourceslice.Pool{}},
		ErrorHandler: func(ctx context.Context, err error, msg string) {
			logger.Error(err, msg)
			c.setError(fmt.Sprintf("%s: %v", msg, err))
		},
	})
	if err != nil {
		return err
	}
	defer publisher.Stop()
	defer c.queue.ShutDown()
	enqueue()
	go func() {
		<-ctx.Done()
		c.queue.ShutDown()
	}()
	for {
		key, quit := c.queue.Get()
		if quit {
			return nil
		}
		if err := c.sync(ctx, publisher); err != nil {
			logger.Error(err, "publishing the steered devices")
			c.setError(err.Error())
			c.queue.AddRateLimited(key)
		} else {
			c.queue.Forget(key)
		}
		c.queue.Done(key)
	}
}

func (c *Controller) setError(message string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status.LastError = message
}

// object is an informer's object of type T, or the last state of one it
// saw deleted (then deleted is true); false for anything else.
func object[T any](obj any) (value T, deleted bool, ok bool) {
	if value, ok = obj.(T); ok {
		return value, false, true
	}
	if tomb, isTomb := obj.(cache.DeletedFinalStateUnknown); isTomb {
		value, ok = tomb.Obj.(T)
	}
	return value, true, ok
}

func (c *Controller) nodeChanged(ctx context.Context, obj any, deleted bool) {
	node, tomb, ok := object[*corev1.Node](obj)
	if !ok {
		return
	}
	deleted = deleted || tomb
	c.mu.Lock()
	defer c.mu.Unlock()
	if deleted {
		delete(c.nodes, node.Name)
		return
	}
	text, has := node.Annotations[AnnotationGPUs]
	if !has {
		delete(c.nodes, node.Name)
		return
	}
	gpus, err := ParseGPUs(text)
	if err != nil {
		klog.FromContext(ctx).Error(err, "ignoring the node", "node", node.Name)
		delete(c.nodes, node.Name)
		return
	}
	c.nodes[node.Name] = gpus
}

// ParseGPUs reads the AnnotationGPUs value: a JSON list of distinct GPU
// indexes (0..63), at least one.
func ParseGPUs(text string) ([]slices.GPU, error) {
	var gpus []slices.GPU
	decoder := json.NewDecoder(strings.NewReader(text))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(&gpus); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", AnnotationGPUs, err)
	}
	if len(gpus) == 0 {
		return nil, fmt.Errorf("annotation %s: no GPU listed", AnnotationGPUs)
	}
	seen := map[int]bool{}
	for i, gpu := range gpus {
		if gpu.Index < 0 || gpu.Index > 63 {
			return nil, fmt.Errorf("annotation %s: GPU %d: index %d is not in 0..63", AnnotationGPUs, i, gpu.Index)
		}
		if seen[gpu.Index] {
			return nil, fmt.Errorf("annotation %s: GPU index %d is listed twice", AnnotationGPUs, gpu.Index)
		}
		seen[gpu.Index] = true
	}
	return gpus, nil
}

// claimChanged appends the claim's new allocations, or its release, to the
// log, in the order the watch delivers them.
func (c *Controller) claimChanged(obj any, deleted bool) {
	claim, tomb, ok := object[*resourceapi.ResourceClaim](obj)
	if !ok {
		return
	}
	deleted = deleted || tomb
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ready {
		return
	}
	c.apply(claim, deleted)
}

// adoptExisting logs the claims allocated before the controller started,
// oldest first, then lets the watch's events in.
func (c *Controller) adoptExisting(store cache.Store) {
	var claims []*resourceapi.ResourceClaim
	for _, obj := range store.List() {
		if claim, ok := obj.(*resourceapi.ResourceClaim); ok {
			claims = append(claims, claim)
		}
	}
	sort.Slice(claims, func(i, j int) bool {
		a, b := claims[i].CreationTimestamp, claims[j].CreationTimestamp
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return claims[i].Namespace+"/"+claims[i].Name < claims[j].Namespace+"/"+claims[j].Name
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, claim := range claims {
		c.apply(claim, false)
	}
	c.ready = true
}

// apply brings the log up to `claim`. REQUIRES: c.mu held.
func (c *Controller) apply(claim *resourceapi.ResourceClaim, deleted bool) {
	_, had := c.allocated[claim.UID]
	allocated := !deleted && claim.Status.Allocation != nil
	switch {
	case had && !allocated:
		for _, a := range c.allocated[claim.UID] {
			c.log = append(c.log, steer.Event{Op: steer.OpRelease, Claim: a.key})
		}
		delete(c.allocated, claim.UID)
	case !had && allocated:
		var mine []allocation
		for _, result := range claim.Status.Allocation.Devices.Results {
			if result.Driver != slices.DriverName {
				continue
			}
			a, known := c.lookup(claim.UID, result.Pool, result.Device)
			if !known {
				continue
			}
			mine = append(mine, a)
			c.log = append(c.log, steer.Event{
				Op: steer.OpPlace, Claim: a.key, Profile: a.profile, Node: a.node, GPU: a.gpu, Start: a.start,
			})
		}
		if len(mine) > 0 {
			c.allocated[claim.UID] = mine
		}
	}
}

// lookup finds a device of pool (a node) by name; false when the node or
// its geometry is not known (then the device is not one this controller
// published).
func (c *Controller) lookup(claim types.UID, node, device string) (allocation, bool) {
	gpus, ok := c.nodes[node]
	if !ok {
		return allocation{}, false
	}
	placed, ok := slices.Devices(c.geometry, gpus)[device]
	if !ok {
		return allocation{}, false
	}
	return allocation{
		key: string(claim) + "/" + device, node: node, gpu: placed.GPU,
		profile: placed.Placement.Profile, start: placed.Placement.Start,
	}, true
}

// sync asks Tessera for the offers and publishes every pool.
func (c *Controller) sync(ctx context.Context, publisher *resourceslice.Controller) error {
	c.mu.Lock()
	request := &steer.Request{GPU: c.opts.GPU, Policy: c.opts.Policy, Events: append([]steer.Event(nil), c.log...)}
	names := make([]string, 0, len(c.nodes))
	for name := range c.nodes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		request.Nodes = append(request.Nodes, steer.Node{Name: name, GPUs: len(c.nodes[name])})
	}
	c.mu.Unlock()

	response, err := c.opts.Steer.Offers(ctx, request)
	if err != nil {
		return err
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	c.geometry = &response.Geometry
	type key struct {
		node, profile string
		gpu, start    int
	}
	show := map[key]bool{}
	for _, offer := range response.Offers {
		show[key{offer.Node, offer.Profile, offer.GPU, offer.Start}] = true
	}
	for _, claim := range c.allocated {
		for _, a := range claim {
			show[key{a.node, a.profile, a.gpu, a.start}] = true
		}
	}
	pools := map[string]resourceslice.Pool{}
	for name, gpus := range c.nodes {
		pools[name] = slices.Pool(name, c.geometry, gpus, func(gpu int, p steer.Placement) bool {
			return c.opts.PublishAll || show[key{name, p.Profile, gpu, p.Start}]
		})
	}
	publisher.Update(&resourceslice.DriverResources{Pools: pools})

	c.status.Nodes = len(c.nodes)
	c.status.Events = len(c.log)
	c.status.Allocated = 0
	for _, claim := range c.allocated {
		c.status.Allocated += len(claim)
	}
	c.status.Offers = response.Offers
	c.status.Followed = response.Followed
	c.status.Adopted = response.Adopted
	c.status.Syncs++
	c.status.LastError = ""
	return nil
}
