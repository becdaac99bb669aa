package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The front serves every server's resources, resource templates and prompts as its own, named
// as tools are: a prompt is SERVER__PROMPT, a resource's URI (and a template's) SERVER__URI,
// split back at the first "__" (server names hold none). The filters that decide which tools a
// client sees decide these too, over the same names: a server's allow and deny see its own
// prompt name or URI, the top level and a client's entry the namespaced one. An allow list
// is a list of what passes, so one written for tools hides a server's resources and prompts
// unless it names them as well.
//
// Lists are asked of the servers when a client lists (each ready server that has the feature,
// concurrently, within its timeout): a server down, or one that does not answer in time, is
// left out of that answer and named in the log. SERVER__URI is not a URI the SDK's own
// resource registry accepts (a scheme cannot hold "_"), so the front answers these methods
// itself, before the SDK's handlers (aggregated).

// changed kinds, for listChanged.
const (
	changedResources = 1 << iota
	changedPrompts
)

// aggregated is the front's own handler of method, nil for the methods the SDK serves.
func (s *frontSession) aggregated(method string) func(context.Context, mcp.Request) (mcp.Result, error) {
	switch method {
	case "resources/list":
		return s.listResources
	case "resources/templates/list":
		return s.listTemplates
	case "resources/read":
		return s.readResource
	case "prompts/list":
		return s.listPrompts
	case "prompts/get":
		return s.getPrompt
	}
	return nil
}

// split cuts a namespaced name at its first "__" into its server and the server's own name.
func (g *Gateway) split(name string) (*downstream, string, bool) {
	server, own, ok := strings.Cut(name, sep)
	d := g.byServer[server]
	if !ok || d == nil || own == "" {
		return nil, "", false
	}
	return d, own, true
}

// keepsItem reports whether the filters let the session see a server's prompt or resource, by
// its own name and its namespaced one.
func (s *frontSession) keepsItem(d *downstream, own, name string) bool {
	return d.cfg.keeps(own) && s.g.allows(name) && s.keeps(name)
}

// has reports whether a ready server declared a feature, and gives its session.
func (d *downstream) has(feature func(*mcp.ServerCapabilities) bool) *mcp.ClientSession {
	_, cs, _ := d.snapshot()
	if cs == nil {
		return nil
	}
	ir := cs.InitializeResult()
	if ir == nil || ir.Capabilities == nil || !feature(ir.Capabilities) {
		return nil
	}
	return cs
}

func hasResources(c *mcp.ServerCapabilities) bool { return c.Resources != nil }
func hasPrompts(c *mcp.ServerCapabilities) bool   { return c.Prompts != nil }

// gather lists, on every ready server that has feature, all pages of one list, concurrently,
// and returns each server's items in config order. A server that fails is left out and logged.
func gather[T any](ctx context.Context, downs []*downstream, what string, feature func(*mcp.ServerCapabilities) bool,
	page func(context.Context, *mcp.ClientSession, string) ([]T, string, error)) [][]T {
	out := make([][]T, len(downs))
	var wg sync.WaitGroup
	for i, d := range downs {
		cs := d.has(feature)
		if cs == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			lctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
			defer cancel()
			var items []T
			cursor := ""
			for n := 0; n < maxListPages; n++ {
				got, next, err := page(lctx, cs, cursor)
				if err != nil {
					d.logf("gateway: server %s: %s: %s", d.cfg.Name, what, oneLine(err.Error()))
					return
				}
				items = append(items, got...)
				if next == "" || len(items) > maxToolsPerServer {
					break
				}
				cursor = next
			}
			out[i] = items
		}()
	}
	wg.Wait()
	return out
}

// noCursor refuses a cursor: the front answers each list in one page.
func noCursor(req mcp.Request) error {
	cursor := ""
	// Params may be a typed nil (a list request without params).
	switch p := req.GetParams().(type) {
	case *mcp.ListResourcesParams:
		if p != nil {
			cursor = p.Cursor
		}
	case *mcp.ListResourceTemplatesParams:
		if p != nil {
			cursor = p.Cursor
		}
	case *mcp.ListPromptsParams:
		if p != nil {
			cursor = p.Cursor
		}
	}
	if cursor != "" {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "gateway: invalid cursor: the gateway lists everything in one page"}
	}
	return nil
}

// aggregate lists one kind of item on every server that has feature (gather) and returns the
// items the session may see, copied with their name (the field name points to) as SERVER__NAME,
// sorted by it.
func aggregate[T any](ctx context.Context, s *frontSession, what string, feature func(*mcp.ServerCapabilities) bool,
	page func(context.Context, *mcp.ClientSession, string) ([]*T, string, error), name func(*T) *string) []*T {
	out := []*T{}
	downs := s.g.servers()
	for i, items := range gather(ctx, downs, what, feature, page) {
		d := downs[i]
		for _, it := range items {
			if it == nil || *name(it) == "" || !s.keepsItem(d, *name(it), d.cfg.Name+sep+*name(it)) {
				continue
			}
			c := *it
			*name(&c) = d.cfg.Name + sep + *name(it)
			out = append(out, &c)
		}
	}
	slices.SortStableFunc(out, func(a, b *T) int { return cmp.Compare(*name(a), *name(b)) })
	return out
}

func (s *frontSession) listResources(ctx context.Context, req mcp.Request) (mcp.Result, error) {
	rs, err := listed(ctx, s, req, "resources/list", hasResources, (*mcp.ClientSession).ListResources,
		func(c string) *mcp.ListResourcesParams { return &mcp.ListResourcesParams{Cursor: c} },
		func(r *mcp.ListResourcesResult) ([]*mcp.Resource, string) { return r.Resources, r.NextCursor },
		func(r *mcp.Resource) *string { return &r.URI })
	if err != nil {
		return nil, err
	}
	return &mcp.ListResourcesResult{Resources: rs}, nil
}

func (s *frontSession) listTemplates(ctx context.Context, req mcp.Request) (mcp.Result, error) {
	ts, err := listed(ctx, s, req, "resources/templates/list", hasResources, (*mcp.ClientSession).ListResourceTemplates,
		func(c string) *mcp.ListResourceTemplatesParams { return &mcp.ListResourceTemplatesParams{Cursor: c} },
		func(r *mcp.ListResourceTemplatesResult) ([]*mcp.ResourceTemplate, string) {
			return r.ResourceTemplates, r.NextCursor
		},
		func(t *mcp.ResourceTemplate) *string { return &t.URITemplate })
	if err != nil {
		return nil, err
	}
	return &mcp.ListResourceTemplatesResult{ResourceTemplates: ts}, nil
}

// listed answers a front list request, which takes no cursor (noCursor), with the items of
// every server that has feature (aggregate): list is the SDK's call of one page, params its
// params for a cursor, items a result's items and next cursor.
func listed[P, R, T any](ctx context.Context, s *frontSession, req mcp.Request, what string, feature func(*mcp.ServerCapabilities) bool,
	list func(*mcp.ClientSession, context.Context, P) (R, error), params func(cursor string) P,
	items func(R) ([]*T, string), name func(*T) *string) ([]*T, error) {
	if err := noCursor(req); err != nil {
		return nil, err
	}
	return aggregate(ctx, s, what, feature, func(ctx context.Context, cs *mcp.ClientSession, cursor string) ([]*T, string, error) {
		res, err := list(cs, ctx, params(cursor))
		if err != nil {
			return nil, "", err
		}
		got, next := items(res)
		return got, next, nil
	}, name), nil
}

// resourceNotFound is MCP's error for a URI no server has, or the filters hide (the same
// answer, so a hidden resource stays unknown).
func resourceNotFound(uri string) error {
	return &jsonrpc.Error{Code: mcp.CodeResourceNotFound, Message: fmt.Sprintf("gateway: no resource %q", short(uri))}
}

// resolve is the server and own name a name of the session's stands for: SERVER__NAME, or a
// name without a configured server's prefix when exactly one ready server offers feature.
// A tool's result names its server's resources by their own URIs (resource links, embedded
// resources), and a client follows them as they are: with one server offering resources,
// there is no doubt whose they are. With several, the name must say (SERVER__URI).
func (s *frontSession) resolve(name string, feature func(*mcp.ServerCapabilities) bool) (*downstream, string, bool) {
	if d, own, ok := s.g.split(name); ok {
		return d, own, true
	}
	var sole *downstream
	for _, d := range s.g.servers() {
		if d.has(feature) != nil {
			if sole != nil {
				return nil, "", false
			}
			sole = d
		}
	}
	return sole, name, sole != nil
}

// target is the server, own name and session a name of the session's goes to (resolve), or
// the error to answer: unknown (or hidden) as notFound says, or the server down.
func (s *frontSession) target(name string, feature func(*mcp.ServerCapabilities) bool, notFound func(string) error) (*downstream, string, *mcp.ClientSession, error) {
	d, own, ok := s.resolve(name, feature)
	if !ok || !s.keepsItem(d, own, d.cfg.Name+sep+own) {
		return nil, "", nil, notFound(name)
	}
	_, cs, _ := d.snapshot()
	if cs == nil {
		st := d.status()
		return nil, "", nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("gateway: server %s is not available (%s)", d.cfg.Name, st.State)}
	}
	if d.has(feature) == nil {
		return nil, "", nil, notFound(name)
	}
	return d, own, cs, nil
}

// passError gives a server's JSON-RPC error to the client as the server gave it, and any
// other failure as an internal error naming the server.
func passError(d *downstream, err error) error {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("gateway: server %s: %s", d.cfg.Name, oneLine(err.Error()))}
}

func (s *frontSession) readResource(ctx context.Context, req mcp.Request) (mcp.Result, error) {
	res, d, own, err := forwardItem(ctx, s, req, "resources/read", "uri", func(p *mcp.ReadResourceParams) *string { return &p.URI },
		hasResources, resourceNotFound, (*mcp.ClientSession).ReadResource)
	if err != nil {
		return nil, err
	}
	// The contents are named as the client named the resource.
	if req.GetParams().(*mcp.ReadResourceParams).URI != own {
		for _, c := range res.Contents {
			if c != nil && c.URI != "" {
				c.URI = d.cfg.Name + sep + c.URI
			}
		}
	}
	return res, nil
}

func (s *frontSession) listPrompts(ctx context.Context, req mcp.Request) (mcp.Result, error) {
	ps, err := listed(ctx, s, req, "prompts/list", hasPrompts, (*mcp.ClientSession).ListPrompts,
		func(c string) *mcp.ListPromptsParams { return &mcp.ListPromptsParams{Cursor: c} },
		func(r *mcp.ListPromptsResult) ([]*mcp.Prompt, string) { return r.Prompts, r.NextCursor },
		func(p *mcp.Prompt) *string { return &p.Name })
	if err != nil {
		return nil, err
	}
	return &mcp.ListPromptsResult{Prompts: ps}, nil
}

func promptNotFound(name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("gateway: no prompt %q", short(name))}
}

func (s *frontSession) getPrompt(ctx context.Context, req mcp.Request) (mcp.Result, error) {
	res, _, _, err := forwardItem(ctx, s, req, "prompts/get", "name", func(p *mcp.GetPromptParams) *string { return &p.Name },
		hasPrompts, promptNotFound, (*mcp.ClientSession).GetPrompt)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// forwardItem sends a request (method) about one of the session's names for a server's
// resource or prompt, the params' field that key points at (field names it for the error), to
// the server it goes to (target), as a request of the front session in flight there (track),
// within the server's timeout: call makes it with a copy of the params that has the server's own
// name. A server's error comes back as passError gives it.
func forwardItem[P any, PP interface {
	*P
	mcp.Params
}, R any](ctx context.Context, s *frontSession, req mcp.Request, method, field string, key func(PP) *string,
	feature func(*mcp.ServerCapabilities) bool, notFound func(string) error,
	call func(*mcp.ClientSession, context.Context, PP) (R, error)) (res R, d *downstream, own string, err error) {
	p, _ := req.GetParams().(PP)
	if p == nil || *key(p) == "" {
		return res, nil, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "gateway: " + method + ": missing " + field}
	}
	d, own, cs, err := s.target(*key(p), feature, notFound)
	if err != nil {
		return res, nil, "", err
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	defer d.track(s, ss, ctx)()
	cctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	q := *p
	*key(&q) = own
	if res, err = call(cs, cctx, &q); err != nil {
		return res, d, own, passError(d, err)
	}
	return res, d, own, nil
}

// complete forwards completion/complete for a prompt's or a resource template's argument to
// its server.
func (s *frontSession) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	if p == nil || p.Ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "gateway: completion/complete: missing ref"}
	}
	ref := *p.Ref
	var name string
	var notFound func(string) error
	feature := hasPrompts
	switch ref.Type {
	case "ref/prompt":
		name, notFound = ref.Name, promptNotFound
	case "ref/resource":
		name, notFound, feature = ref.URI, resourceNotFound, hasResources
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("gateway: completion/complete: unknown ref type %q", short(ref.Type))}
	}
	d, own, cs, err := s.target(name, feature, notFound)
	if err != nil {
		return nil, err
	}
	if ir := cs.InitializeResult(); ir == nil || ir.Capabilities == nil || ir.Capabilities.Completions == nil {
		// A server without completions has none to give: an empty answer, as the spec's
		// "no suggestions".
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
	}
	defer d.track(s, req.Session, ctx)()
	cctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	q := *p
	if ref.Type == "ref/prompt" {
		ref.Name = own
	} else {
		ref.URI = own
	}
	q.Ref = &ref
	res, err := cs.Complete(cctx, &q)
	if err != nil {
		return nil, passError(d, err)
	}
	return res, nil
}

// listChanged tells every front session that a server's resources or prompts (kinds) changed.
// The SDK sends list_changed only when its own registry changes, and the front keeps none of
// these there (see the top of this file): adding and removing a placeholder, within the SDK's
// debounce delay, changes it to no effect and sends one notification.
func (g *Gateway) listChanged(kinds int) {
	for _, s := range g.liveSessions() {
		if kinds&changedResources != 0 {
			s.srv.AddResource(&mcp.Resource{URI: listChangedPlaceholder, Name: "placeholder"}, nil)
			s.srv.RemoveResources(listChangedPlaceholder)
		}
		if kinds&changedPrompts != 0 {
			s.srv.AddPrompt(&mcp.Prompt{Name: listChangedPlaceholder}, nil)
			s.srv.RemovePrompts(listChangedPlaceholder)
		}
	}
}

// listChangedPlaceholder is the URI and name listChanged adds and removes at once; the front's
// own handlers answer every list, so it is never seen.
const listChangedPlaceholder = "caskg-gateway:list-changed"

// serverListChanged tells the front sessions that a server with resources or prompts has a new
// session (its lists may differ from the last one's).
func (g *Gateway) serverListChanged(cs *mcp.ClientSession) {
	ir := cs.InitializeResult()
	if ir == nil || ir.Capabilities == nil {
		return
	}
	kinds := 0
	if ir.Capabilities.Resources != nil {
		kinds |= changedResources
	}
	if ir.Capabilities.Prompts != nil {
		kinds |= changedPrompts
	}
	if kinds != 0 {
		g.listChanged(kinds)
	}
}

// Subscriptions. A front session subscribes to SERVER__URI; the gateway subscribes to URI on
// the server once, however many sessions want it, unsubscribes when the last of them
// unsubscribes or ends, subscribes again when the server's session is new, and passes each
// notifications/resources/updated to the sessions subscribed.

// subKey is one server's resource.
type subKey struct{ server, uri string }

// subscriptions are the front sessions' resource subscriptions, by server and resource.
type subscriptions struct {
	byServer map[string]*downstream // the gateway's servers, set by New

	mu sync.Mutex
	m  map[subKey]map[*frontSession]string // the URI as each session named it
}

func (s *frontSession) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	d, own, cs, err := s.target(req.Params.URI, func(c *mcp.ServerCapabilities) bool { return c.Resources != nil && c.Resources.Subscribe }, resourceNotFound)
	if err != nil {
		return err
	}
	subs := s.subs
	k := subKey{d.cfg.Name, own}
	subs.mu.Lock()
	first := len(subs.m[k]) == 0
	if subs.m == nil {
		subs.m = map[subKey]map[*frontSession]string{}
	}
	if subs.m[k] == nil {
		subs.m[k] = map[*frontSession]string{}
	}
	subs.m[k][s] = req.Params.URI
	subs.mu.Unlock()
	if !first {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	if err := cs.Subscribe(cctx, &mcp.SubscribeParams{URI: own}); err != nil {
		subs.mu.Lock()
		delete(subs.m[k], s)
		if len(subs.m[k]) == 0 {
			delete(subs.m, k)
		}
		subs.mu.Unlock()
		return passError(d, err)
	}
	return nil
}

func (s *frontSession) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	d, own, ok := s.resolve(req.Params.URI, hasResources)
	if !ok {
		return resourceNotFound(req.Params.URI)
	}
	s.subs.drop(ctx, d, own, s)
	return nil
}

// drop ends s's subscription to a server's uri, and the gateway's when s was the last.
func (subs *subscriptions) drop(ctx context.Context, d *downstream, uri string, s *frontSession) {
	k := subKey{d.cfg.Name, uri}
	subs.mu.Lock()
	_, had := subs.m[k][s]
	delete(subs.m[k], s)
	last := had && len(subs.m[k]) == 0
	if last {
		delete(subs.m, k)
	}
	subs.mu.Unlock()
	if !last {
		return
	}
	if _, cs, _ := d.snapshot(); cs != nil {
		cctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
		defer cancel()
		if err := cs.Unsubscribe(cctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
			d.logf("gateway: server %s: resources/unsubscribe: %s", d.cfg.Name, oneLine(err.Error()))
		}
	}
}

// release drops every subscription of a session that ended.
func (subs *subscriptions) release(s *frontSession) {
	subs.mu.Lock()
	var keys []subKey
	for k, set := range subs.m {
		if _, ok := set[s]; ok {
			keys = append(keys, k)
		}
	}
	subs.mu.Unlock()
	for _, k := range keys {
		if d := subs.byServer[k.server]; d != nil {
			subs.drop(context.Background(), d, k.uri, s)
		}
	}
}

// resubscribe subscribes a server's new session to the resources front sessions want.
func (g *Gateway) resubscribe(ctx context.Context, d *downstream, cs *mcp.ClientSession) {
	g.subs.resubscribe(ctx, d, cs)
}

// resourceUpdated passes a server's notifications/resources/updated to the sessions subscribed.
func (g *Gateway) resourceUpdated(ctx context.Context, server, uri string) {
	g.subs.updated(ctx, server, uri)
}

// resubscribe is Gateway.resubscribe's work.
func (subs *subscriptions) resubscribe(ctx context.Context, d *downstream, cs *mcp.ClientSession) {
	subs.mu.Lock()
	var uris []string
	for k := range subs.m {
		if k.server == d.cfg.Name {
			uris = append(uris, k.uri)
		}
	}
	subs.mu.Unlock()
	for _, uri := range uris {
		cctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
		if err := cs.Subscribe(cctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			d.logf("gateway: server %s: resources/subscribe %s again: %s", d.cfg.Name, short(uri), oneLine(err.Error()))
		}
		cancel()
	}
}

// updated passes a server's notifications/resources/updated to the sessions subscribed.
func (subs *subscriptions) updated(ctx context.Context, server, uri string) {
	subs.mu.Lock()
	to := map[*frontSession]string{}
	for s, named := range subs.m[subKey{server, uri}] {
		to[s] = named
	}
	subs.mu.Unlock()
	for s, named := range to {
		_ = s.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: named})
	}
}
