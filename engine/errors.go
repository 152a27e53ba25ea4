package engine

import (
	"fmt"
	"strings"
)

// Error replies, with Redis 7.0's exact texts (server.c
// createSharedObjects and the handlers that emit them). Every handler
// uses these; a differential test pins them against redis-server.
const (
	ErrWrongType       = "WRONGTYPE Operation against a key holding the wrong kind of value"
	ErrSyntax          = "ERR syntax error"
	ErrNotInteger      = "ERR value is not an integer or out of range"
	ErrNotFloat        = "ERR value is not a valid float"
	ErrNoSuchKey       = "ERR no such key"
	ErrIndexOutOfRange = "ERR index out of range"
	ErrDBIndex         = "ERR DB index is out of range"
	ErrOverflow        = "ERR increment or decrement would overflow"
	ErrIncrFloatNaN    = "ERR increment would produce NaN or Infinity"
	ErrNoAuth          = "NOAUTH Authentication required."
	ErrWrongPass       = "WRONGPASS invalid username-password pair or user is disabled."
	ErrStringTooLong   = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	ErrSameObject      = "ERR source and destination objects are the same"
	ErrOffsetRange     = "ERR offset is out of range"
	ErrTimeoutNotFloat = "ERR timeout is not a float or out of range"
	ErrNoPerm          = "ERR not permitted"
	ErrMaxClients      = "ERR max number of clients reached"
	ErrLoading         = "LOADING Redis is loading the dataset in memory"
	ErrOOM             = "OOM command not allowed when used memory > 'maxmemory'."
	ErrNoScript        = "NOSCRIPT No matching script. Please use EVAL."
	ErrReadOnlyReplica = "READONLY You can't write against a read only replica."
	ErrMasterDown      = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
	ErrExecAbort       = "EXECABORT Transaction discarded because of previous errors."
	ErrCountPositive   = "ERR value is out of range, must be positive"
	ErrDecrOverflow    = "ERR decrement would overflow"
	ErrLCSNotString    = "ERR The specified keys must contain string values"
	ErrLCSLenAndIdx    = "ERR If you want both the length and indexes, please just use IDX."
	ErrLCSTooLong      = "ERR String too long for LCS"
	ErrLCSMemory       = "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"
	ErrLCSAlloc        = "ERR Insufficient memory, failed allocating transient memory for LCS"
)

// ErrWrongArgs is the arity error for the command (or "container|sub").
// ErrInternal is the reply to a command whose handler panicked (a bug;
// Redis would crash there): the server logged the stack and goes on.
func ErrInternal(cmd string) string {
	return "ERR internal error running '" + cmd + "' command, see the server log"
}

func ErrWrongArgs(name string) string {
	return "ERR wrong number of arguments for '" + name + "' command"
}

// ErrInvalidExpire is the error for an out-of-range expire time.
func ErrInvalidExpire(cmd string) string {
	return "ERR invalid expire time in '" + cmd + "' command"
}

// ErrUnknownSubcommand answers a container command given a subcommand it
// does not have.
func ErrUnknownSubcommand(sub, container string) string {
	return fmt.Sprintf("ERR unknown subcommand '%.128s'. Try %s HELP.", sub, container)
}

// errUnknownCommand answers a command name that is not in the table,
// quoting at most 128 bytes of arguments as Redis does.
func errUnknownCommand(args [][]byte) string {
	b := make([]byte, 0, 200)
	b = append(b, "ERR unknown command '"...)
	name := args[0]
	if len(name) > 128 {
		name = name[:128]
	}
	b = append(b, name...)
	b = append(b, "', with args beginning with: "...)
	quoted := 0
	for _, a := range args[1:] {
		if quoted >= 128 {
			break
		}
		if room := 128 - quoted; len(a) > room {
			a = a[:room]
		}
		b = append(b, '\'')
		b = append(b, a...)
		b = append(b, '\'', ' ')
		quoted += len(a) + 3
	}
	return string(b)
}

// Errors of the ACL (acl.c, server.c processCommand, multi.c execCommand),
// with Redis 7.0's texts.
const (
	ErrACLDefaultUndeletable = "ERR The 'default' user cannot be removed"
	ErrACLUserSpaces         = "ERR Usernames can't contain spaces or null characters"
	ErrACLNoFile             = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."
	ErrACLSave               = "ERR There was an error trying to save the ACLs. Please check the server logs for more information"
)

// aclRuleError is why a rule was refused, with Redis's texts
// (ACLSetUserStringError).
type aclRuleError string

func (e aclRuleError) Error() string { return string(e) }

const (
	errRuleUnknown      aclRuleError = "Unknown command or category name in ACL"
	errRuleSyntax       aclRuleError = "Syntax error"
	errRuleKeyAfterAll  aclRuleError = "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns"
	errRuleChanAfterAll aclRuleError = "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels"
	errRuleNoSuchPass   aclRuleError = "The password you are trying to remove from the user does not exist"
	errRuleBadHash      aclRuleError = "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"
	errRuleSubFirstArg  aclRuleError = "Allowing first-arg of a subcommand is not supported"
)

// ErrACLDenied is the refusal of a command the user may not run, or of a
// key or channel it may not touch.
func ErrACLDenied(d Denial, cmd string) string {
	switch d {
	case DeniedCommand:
		return "NOPERM this user has no permissions to run the '" + cmd + "' command"
	case DeniedKey:
		return "NOPERM this user has no permissions to access one of the keys used as arguments"
	case DeniedChannel:
		return "NOPERM this user has no permissions to access one of the channels used as arguments"
	}
	return "ERR no permission"
}

// ErrNoPermInExec is EXEC's reply for a queued command the rules no
// longer allow.
func ErrNoPermInExec(d Denial) string {
	reason := "no permission"
	switch d {
	case DeniedCommand:
		reason = "no permission to execute the command or subcommand"
	case DeniedKey:
		reason = "no permission to touch the specified keys"
	case DeniedChannel:
		reason = "no permission to access one of the channels used as arguments"
	}
	return "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: " + reason
}

// Errors of the connection and server families (networking.c, server.c,
// slowlog.c, latency.c, config.c), with Redis 7.0's texts.
const (
	ErrAuthNoPassword  = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	ErrClientName      = "ERR Client names cannot contain spaces, newlines or special characters."
	ErrProtoVersion    = "ERR Protocol version is not an integer or out of range"
	ErrNoProto         = "NOPROTO unsupported protocol version"
	ErrNoReplicas      = "NOREPLICAS Not enough good replicas to write."
	ErrHelloNoAuth     = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"
	ErrNoSuchClient    = "ERR No such client"
	ErrClientIDRange   = "ERR client-id should be greater than 0"
	ErrInvalidClientID = "ERR Invalid client ID"
	ErrTimeoutNotInt   = "ERR timeout is not an integer or out of range"
	ErrTimeoutNegative = "ERR timeout is negative"
	ErrPauseMode       = "ERR CLIENT PAUSE mode must be WRITE or ALL"
	ErrUnblockReason   = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"
	ErrUnblocked       = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
	ErrCachingNoTrack  = "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"
	ErrFirstDBIndex    = "ERR invalid first DB index"
	ErrSecondDBIndex   = "ERR invalid second DB index"
	ErrSlowlogCount    = "ERR count should be greater than or equal to -1"
	ErrNoShutdown      = "ERR No shutdown in progress."
	ErrShutdownFailed  = "ERR Errors trying to SHUTDOWN. Check logs."
	ErrReplicaKeyspace = "ERR Replica can't interact with the keyspace"
	ErrBusyKey         = "BUSYKEY Target key name already exists."
	ErrBadDump         = "ERR DUMP payload version or checksum are wrong"
	ErrBadDataFormat   = "ERR Bad data format"
	ErrMonitorDenied   = "ERR MONITOR isn't allowed for DENY BLOCKING client"
)

// ErrProtectedCommand refuses a command its directive does not allow
// (processCommand's CMD_PROTECTED check): "DEBUG command not allowed. If
// the enable-debug-command option is set ...", a subcommand named by its
// container as Redis names it.
func ErrProtectedCommand(cmd, directive string) string {
	cmd, _, _ = strings.Cut(cmd, "|")
	return "ERR " + strings.ToUpper(cmd) + " command not allowed. If the " + directive +
		" option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."
}

// ErrSubcommandSyntax answers a known subcommand given arguments it does
// not accept (addReplySubcommandSyntaxError): sub as the client sent it,
// container upper-cased.
func ErrSubcommandSyntax(sub, container string) string {
	return fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%.128s'. Try %s HELP.", sub, container)
}

// ErrIntRange is getIntFromObjectOrReply's answer to an integer beyond
// 32 bits (a DB index of SELECT, MOVE, COPY, SWAPDB); a non-integer gets
// ErrNotInteger.
const ErrIntRange = "ERR value is out of range, value must between -2147483648 and 2147483647"

// Errors of the list family (t_list.c); the numkeys and count texts are
// also ZMPOP's (t_zset.c).
const (
	ErrLPosRankZero     = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"
	ErrLPosCountNeg     = "ERR COUNT can't be negative"
	ErrLPosMaxlenNeg    = "ERR MAXLEN can't be negative"
	ErrNumkeysPositive  = "ERR numkeys should be greater than 0"
	ErrCountGreaterZero = "ERR count should be greater than 0"
)

// Errors of the sorted set family (t_zset.c), with Redis 7.0's texts.
const (
	ErrZAddXXNX        = "ERR XX and NX options at the same time are not compatible"
	ErrZAddGTLTNX      = "ERR GT, LT, and/or NX options at the same time are not compatible"
	ErrZAddIncrPair    = "ERR INCR option supports a single increment-element pair"
	ErrZScoreNaN       = "ERR resulting score is not a number (NaN)"
	ErrZMinMaxFloat    = "ERR min or max is not a float"
	ErrZMinMaxLex      = "ERR min or max not valid string range item"
	ErrZLimitRank      = "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
	ErrZWithscoresLex  = "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
	ErrZWeightFloat    = "ERR weight value is not a float"
	ErrLimitNegative   = "ERR LIMIT can't be negative"
	ErrValueOutOfRange = "ERR value is out of range"
	ErrLongRange       = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
)

// ErrAtLeastOneKey answers ZUNION-like commands given numkeys < 1.
func ErrAtLeastOneKey(cmd string) string {
	return "ERR at least 1 input key is needed for '" + cmd + "' command"
}

// Transactions (multi.c, server.c).
const (
	ErrMultiNested      = "ERR MULTI calls can not be nested"
	ErrExecWithoutMulti = "ERR EXEC without MULTI"
	ErrDiscardNoMulti   = "ERR DISCARD without MULTI"
	ErrWatchInMulti     = "ERR WATCH inside MULTI is not allowed"
	ErrNotInMulti       = "ERR Command not allowed inside a transaction"
	ErrExecAbortBecause = "EXECABORT Transaction discarded because of: "
)

// COMMAND GETKEYS (server.c).
const (
	ErrGetKeysInvalidCommand = "ERR Invalid command specified"
	ErrGetKeysNoKeys         = "ERR The command has no key arguments"
	ErrGetKeysArity          = "ERR Invalid number of arguments specified for command"
	ErrGetKeysInvalidArgs    = "ERR Invalid arguments specified for command"
)

// The hash family (t_hash.c).
const (
	ErrHashNotInteger = "ERR hash value is not an integer"
	ErrHashNotFloat   = "ERR hash value is not a float"
	ErrHashNaNOrInf   = "ERR value is NaN or Infinity"
)

// The generic key family (expire.c, db.c, object.c).
const (
	ErrExpireNXCombo = "ERR NX and XX, GT or LT options at the same time are not compatible"
	ErrExpireGTLT    = "ERR GT and LT options at the same time are not compatible"
	ErrInvalidCursor = "ERR invalid cursor"
	ErrLFUNotChosen  = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
	ErrLFUChosen     = "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
)

// ErrSubscribedContext is processCommand's answer, in RESP2's subscribed
// mode, to a command other than those a subscribed client may send.
func ErrSubscribedContext(name string) string {
	return "ERR Can't execute '" + name + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
}

// ErrSsubscribeDenyBlocking answers SSUBSCRIBE inside a transaction: EXEC
// runs its commands as a client that may not block, and unlike
// SUBSCRIBE, 7.0's SSUBSCRIBE makes no exception for it.
const (
	ErrSsubscribeDenyBlocking = "ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client"
)

// The set family (t_set.c).
const (
	ErrNumkeysTooMany = "ERR Number of keys can't be greater than number of args"
)

// ---- the server's (persistence, protected mode) ---------------------------

// ErrBGSaveInProgress is SAVE's and BGSAVE's reply while a background save
// runs.
const ErrBGSaveInProgress = "ERR Background save already in progress"

// ErrMisconfRDB is the reply to writes after a failed background save with
// stop-writes-on-bgsave-error yes (shared.bgsaveerr).
const ErrMisconfRDB = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. " +
	"Commands that may modify the data set are disabled, because this instance is configured to report errors during writes " +
	"if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error."

// ErrRewriteInProgress is BGREWRITEAOF's reply while a rewrite runs.
const ErrRewriteInProgress = "ERR Background append only file rewriting already in progress"

// ErrProtectedMode is what Redis 7.0 writes to a connection that
// protected mode refuses (networking.c clientAcceptHandler).
const ErrProtectedMode = "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside."

// ErrMisconfAOF is the reply to writes while the AOF cannot be written.
func ErrMisconfAOF(err error) string {
	return "MISCONF Errors writing to the AOF file: " + strings.TrimSpace(err.Error())
}
