package commands

import (
	"github.com/zredis/zredis/engine"
)

// CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO: client-side
// caching's commands (networking.c's clientCommand); the registry they
// drive is engine.Tracking.

// Tracking's errors, as networking.c words them.
const (
	errTrackingOneRedirect  = "ERR A client can only redirect to a single other client"
	errTrackingNoRedirect   = "ERR The client ID you want redirect to does not exist"
	errTrackingPrefixBCast  = "ERR PREFIX option requires BCAST mode to be enabled"
	errTrackingSwitchBCast  = "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode."
	errTrackingOptBCast     = "ERR OPTIN and OPTOUT are not compatible with BCAST"
	errTrackingOptInOut     = "ERR You can't specify both OPTIN mode and OPTOUT mode"
	errTrackingSwitchOpt    = "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode."
	errCachingYesNeedsOptIn = "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."
	errCachingNoNeedsOptOut = "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."
)

// clientTrackingCommand is CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST]
// [PREFIX p ...] [OPTIN] [OPTOUT] [NOLOOP]: the options are read first,
// then checked against each other and the client's current mode.
func clientTrackingCommand(c *engine.Ctx) {
	var opts engine.ClientTracking
	var redirect int64
	var prefixes []string
	for j := 3; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		switch a := c.Args[j]; {
		case engine.EqualFold(a, "redirect") && more > 0:
			j++
			if redirect != 0 {
				c.Error(errTrackingOneRedirect)
				return
			}
			id, ok := engine.ParseInt(c.Args[j])
			if !ok {
				c.Error(engine.ErrNotInteger)
				return
			}
			if c.D.Tracking.Lookup(id) == nil {
				c.Error(errTrackingNoRedirect)
				return
			}
			redirect = id
		case engine.EqualFold(a, "bcast"):
			opts.BCast = true
		case engine.EqualFold(a, "optin"):
			opts.OptIn = true
		case engine.EqualFold(a, "optout"):
			opts.OptOut = true
		case engine.EqualFold(a, "noloop"):
			opts.NoLoop = true
		case engine.EqualFold(a, "prefix") && more > 0:
			j++
			prefixes = append(prefixes, string(c.Args[j]))
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	cl := c.Client
	switch {
	case engine.EqualFold(c.Args[2], "on"):
		cur := cl.Tracking
		on := cur != nil && cur.On
		switch {
		case !opts.BCast && len(prefixes) > 0:
			c.Error(errTrackingPrefixBCast)
		case on && cur.BCast != opts.BCast:
			c.Error(errTrackingSwitchBCast)
		case opts.BCast && (opts.OptIn || opts.OptOut):
			c.Error(errTrackingOptBCast)
		case opts.OptIn && opts.OptOut:
			c.Error(errTrackingOptInOut)
		case on && (opts.OptIn && cur.OptOut || opts.OptOut && cur.OptIn):
			c.Error(errTrackingSwitchOpt)
		default:
			if opts.BCast {
				if msg := c.D.Tracking.PrefixCollision(cl, prefixes); msg != "" {
					c.Error(msg)
					return
				}
			}
			c.D.Tracking.Enable(cl, redirect, opts, prefixes)
			c.W.OK()
		}
	case engine.EqualFold(c.Args[2], "off"):
		c.D.Tracking.Disable(cl)
		c.W.OK()
	default:
		c.Error(engine.ErrSyntax)
	}
}

// clientCachingCommand is CLIENT CACHING YES|NO: whether the next
// command's keys are remembered, against the OPTIN or OPTOUT default.
func clientCachingCommand(c *engine.Ctx) {
	ct := c.Client.Tracking
	if ct == nil || !ct.On {
		c.Error(engine.ErrCachingNoTrack)
		return
	}
	switch opt := c.Args[2]; {
	case engine.EqualFold(opt, "yes"):
		if !ct.OptIn {
			c.Error(errCachingYesNeedsOptIn)
			return
		}
	case engine.EqualFold(opt, "no"):
		if !ct.OptOut {
			c.Error(errCachingNoNeedsOptOut)
			return
		}
	default:
		c.Error(engine.ErrSyntax)
		return
	}
	ct.Caching = true
	c.W.OK()
}

// clientGetredirCommand is CLIENT GETREDIR: the redirect's client ID, 0
// without one, -1 when tracking is off.
func clientGetredirCommand(c *engine.Ctx) {
	if ct := c.Client.Tracking; ct != nil && ct.On {
		c.W.Int(ct.Redirect)
		return
	}
	c.W.Int(-1)
}

// clientTrackinginfoCommand is CLIENT TRACKINGINFO: the flags, redirect
// and prefixes of the client's tracking.
func clientTrackinginfoCommand(c *engine.Ctx) {
	ct := c.Client.Tracking
	if ct == nil {
		ct = &engine.ClientTracking{}
	}
	flags := []string{"off"}
	if ct.On {
		flags[0] = "on"
	}
	if ct.BCast {
		flags = append(flags, "bcast")
	}
	if ct.OptIn {
		flags = append(flags, "optin")
		if ct.Caching {
			flags = append(flags, "caching-yes")
		}
	}
	if ct.OptOut {
		flags = append(flags, "optout")
		if ct.Caching {
			flags = append(flags, "caching-no")
		}
	}
	if ct.NoLoop {
		flags = append(flags, "noloop")
	}
	if ct.BrokenRedir {
		flags = append(flags, "broken_redirect")
	}
	c.W.Map(3)
	c.W.BulkString("flags")
	c.W.Set(len(flags))
	for _, f := range flags {
		c.W.BulkString(f)
	}
	c.W.BulkString("redirect")
	if ct.On {
		c.W.Int(ct.Redirect)
	} else {
		c.W.Int(-1)
	}
	c.W.BulkString("prefixes")
	c.W.Array(len(ct.Prefixes))
	for _, p := range ct.Prefixes {
		c.W.BulkString(p)
	}
}
