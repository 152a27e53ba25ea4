package ZRedis::ExpiryListener;

# Receives the expiry messages zredis pushes (one 0MQ message per expired
# key: three frames, or four with a message id) on a PULL socket, decodes
# them and drops the ones that report an expiry already handled.

use strict;
use warnings;

use Carp qw(croak);
use Exporter qw(import);
use ZMQ::FFI ();
use ZMQ::FFI::Constants qw(
    ZMQ_PULL ZMQ_RCVHWM ZMQ_RCVMORE ZMQ_RCVTIMEO ZMQ_RECONNECT_IVL
    ZMQ_HEARTBEAT_IVL ZMQ_HEARTBEAT_TIMEOUT ZMQ_MAXMSGSIZE
    ZMQ_CURVE_SERVERKEY ZMQ_CURVE_PUBLICKEY ZMQ_CURVE_SECRETKEY
);
use POSIX qw(EAGAIN EINTR);

our $VERSION = '1.00';

our @EXPORT_OK = qw(decode type_name curve_public curve_keypair TYPE_STRING TYPE_HASH TYPE_LIST TYPE_SET TYPE_ZSET TYPE_STREAM
    TYPE_HASH_FIELDS);

use constant {
    TYPE_STRING => 0,
    TYPE_HASH   => 1,
    TYPE_LIST   => 2,
    TYPE_SET    => 3,
    TYPE_ZSET   => 4,
    TYPE_STREAM => 5,
    # A hash's fields that expired on their own (per-field expiry), with
    # their values: frame 3 as a hash's.
    TYPE_HASH_FIELDS => 6,
};

my @TYPE_NAMES = qw(string hash list set zset stream hash-fields);

# The message ids remembered by default (dedup => N).
use constant DEDUP_DEFAULT => 100_000;

# How long one blocking receive waits before run() looks at its stop flag:
# ZMQ::FFI has no poll, so a receive timeout is what lets a signal handler
# (or a callback in another part of the program) end run() promptly.
use constant STOP_CHECK_MS => 200;

sub type_name {
    my ($code) = @_;
    return $TYPE_NAMES[$code];
}

# ---------------------------------------------------------------------------
# Decoding
# ---------------------------------------------------------------------------

# decode($frames) takes the frames of one message (an array reference of
# byte strings) and returns a hash reference:
#   db         database number
#   type       type name: string, hash, list, set, zset, stream or hash-fields
#   type_code  the type as sent (0..6)
#   key        key bytes
#   value      string: the bytes; hash and hash-fields (the hash's expired
#              fields only): a hash reference field => value;
#              list/set: an array reference of members; zset: an array
#              reference of [member, score] pairs, score as the text Redis
#              prints ("1.5", "inf"), in score order; stream: an array
#              reference of entries in ID order, each [id, [field, value,
#              ...]] as XRANGE replies (a field repeated in an entry is kept)
#   parts      every item of frame 3 in frame order (string: [value]; hash,
#              hash-fields: field, value, ...; list/set: members; zset:
#              member, score, ...; stream: the entries, [id, [field, value, ...]] each, as value)
#   id         the message id (frame 4, "<ms>-<hash>"), undef for a message
#              of three frames
# A malformed message dies with a one-line reason ending in "\n". Every
# length is checked against the bytes the frame holds before it is used, so
# no claimed length ever makes this allocate.
sub decode {
    my ($frames) = @_;
    die "not an array reference of frames\n" if ref $frames ne 'ARRAY';
    die sprintf("expected 3 or 4 frames, got %d\n", scalar @$frames) if @$frames != 3 && @$frames != 4;
    my ($header, $key_frame, $value_frame, $id) = @$frames;

    die sprintf("header frame is %d bytes, expected 4\n", length $header) if length $header != 4;
    _check_message_id($id // '', $header, $key_frame) if @$frames == 4;
    my ($db, $type_code) = unpack 'S S', $header;
    my $type = $TYPE_NAMES[$type_code];
    die "unknown value type $type_code\n" if !defined $type;

    my $key_items = _items($key_frame, 1, 'key');

    if ($type_code == TYPE_STREAM) {
        my $entries = _stream_entries($value_frame);
        return {
            db        => $db,
            type      => $type,
            type_code => $type_code,
            key       => $key_items->[0],
            value     => $entries,
            parts     => [ map { [ $_->[0], [ @{ $_->[1] } ] ] } @$entries ],
            id        => $id,
        };
    }

    my $parts = _items($value_frame, $type_code == TYPE_STRING ? 1 : undef, 'value');
    my $value;
    if ($type_code == TYPE_STRING) {
        $value = $parts->[0];
    }
    elsif ($type_code == TYPE_HASH || $type_code == TYPE_HASH_FIELDS) {
        die sprintf("%s count %d is odd\n", $type, scalar @$parts) if @$parts % 2;
        $value = {@$parts};
    }
    elsif ($type_code == TYPE_ZSET) {
        die sprintf("zset count %d is odd\n", scalar @$parts) if @$parts % 2;
        $value = [map { [ $parts->[ 2 * $_ ], $parts->[ 2 * $_ + 1 ] ] } 0 .. @$parts / 2 - 1];
    }
    else {
        $value = [@$parts];
    }

    return {
        db        => $db,
        type      => $type,
        type_code => $type_code,
        key       => $key_items->[0],
        value     => $value,
        parts     => $parts,
        id        => $id,
    };
}

# The message id: "<ms>-<hash>", ms the event's Unix time in milliseconds
# (decimal, no leading zero), hash the FNV-1a 64-bit hash of frame 1 then
# frame 2 as 16 lowercase hex digits. Checked as the Go decoder checks it
# (zmqpub/id.go), so that both accept the same messages: an id that does
# not match its frames would make the listener drop the wrong message.
use constant MAX_MESSAGE_ID_LEN => 19 + 1 + 16;

sub _check_message_id {
    my ($id, $header, $key_frame) = @_;
    die sprintf("message id of %d bytes, at most %d\n", length $id, MAX_MESSAGE_ID_LEN)
        if length $id > MAX_MESSAGE_ID_LEN;
    my $printable = $id =~ s/([^\x21-\x7E])/sprintf('\\x%02x', ord $1)/ger;
    die qq(message id "$printable": time is not decimal\n) if $id !~ /\A[0-9]*(?:-|\z)/;
    my ($ms) = $id =~ /\A([0-9]+)-.{16}\z/s
        or die qq(message id "$printable": want <ms>-<16 hex digits>\n);
    # Past int64 the Go encoder cannot have written it.
    die qq(message id "$printable": time out of range\n)
        if length $ms > 19 || (length $ms == 19 && $ms gt '9223372036854775807');
    my $want = ($ms =~ s/\A0+(?=[0-9])//r) . '-' . _fnv1a64_hex($header . $key_frame);
    die qq(message id "$printable" does not match its frames (want "$want")\n) if $id ne $want;
    return;
}

# _fnv1a64_hex($bytes) is the FNV-1a 64-bit hash of $bytes as 16 lowercase
# hex digits. The state is kept as two 32-bit halves: a 64-bit product
# would overflow a Perl integer into a floating-point number and lose
# bits. The prime is 2**40 + 0x1b3, so a multiplication is h * 0x1b3 plus
# h's low half shifted up by 40 bits (8 in the high half).
sub _fnv1a64_hex {
    my ($bytes) = @_;
    my ($hi, $lo) = (0xcbf29ce4, 0x84222325);
    for my $c (unpack 'C*', $bytes) {
        $lo ^= $c;
        my $low = $lo * 0x1b3;
        $hi = ($hi * 0x1b3 + ($lo << 8) + ($low >> 32)) & 0xFFFFFFFF;
        $lo = $low & 0xFFFFFFFF;
    }
    return sprintf '%08x%08x', $hi, $lo;
}

# _items reads the frames that carry length-prefixed items. The key frame
# and a string's value frame are one uint32 length and the bytes
# ($fixed_count 1: no count word); a collection's value frame is a uint32
# count followed by that many length-prefixed items. The frame must end
# exactly after the last item.
sub _items {
    my ($frame, $fixed_count, $what) = @_;
    my $size = length $frame;
    my $pos  = 0;
    my $count = $fixed_count;
    if (!defined $count) {
        die "$what frame is $size bytes, too short for its count\n" if $size < 4;
        $count = unpack 'L', $frame;
        $pos = 4;
    }
    my @items;
    for my $i (1 .. $count) {
        die "$what frame ends inside the length of item $i of $count\n" if $size - $pos < 4;
        my $len = unpack 'L', substr($frame, $pos, 4);
        $pos += 4;
        die "$what item $i of $count claims $len bytes, the frame holds " . ($size - $pos) . "\n"
            if $len > $size - $pos;
        push @items, substr($frame, $pos, $len);
        $pos += $len;
    }
    die sprintf("%s frame has %d trailing bytes\n", $what, $size - $pos) if $pos != $size;
    return \@items;
}

# _stream_entries reads a stream's value frame: a uint32 count of entries,
# then for each entry its ID (uint32 length and the "ms-seq" text), a uint32
# count of its fields and values (even) and each of them length-prefixed.
# The frame must end exactly after the last entry. Every count is checked
# against the bytes left before anything is read for it.
sub _stream_entries {
    my ($frame) = @_;
    my $size = length $frame;
    die "stream value frame is $size bytes, too short for its count\n" if $size < 4;
    my $count = unpack 'L', $frame;
    my $pos   = 4;
    # An entry takes at least 8 bytes (its ID's length and its item count).
    die "stream value claims $count entries, the frame holds " . ($size - $pos) . " bytes\n"
        if $count > ($size - $pos) / 8;
    my $item = sub {
        my ($what) = @_;
        die "stream value frame ends inside the length of $what\n" if $size - $pos < 4;
        my $len = unpack 'L', substr($frame, $pos, 4);
        $pos += 4;
        die "$what claims $len bytes, the frame holds " . ($size - $pos) . "\n" if $len > $size - $pos;
        my $bytes = substr($frame, $pos, $len);
        $pos += $len;
        return $bytes;
    };
    my @entries;
    for my $i (1 .. $count) {
        my $id = $item->("the ID of stream entry $i of $count");
        die "stream value frame ends inside the item count of entry $i of $count\n" if $size - $pos < 4;
        my $n = unpack 'L', substr($frame, $pos, 4);
        $pos += 4;
        die "stream entry $i of $count has odd item count $n\n" if $n % 2;
        die "stream entry $i of $count claims $n items, the frame holds " . ($size - $pos) . " bytes\n"
            if $n > ($size - $pos) / 4;
        my @fields = map { $item->("item $_ of $n of stream entry $i of $count") } 1 .. $n;
        push @entries, [ $id, \@fields ];
    }
    die sprintf("stream value frame has %d trailing bytes\n", $size - $pos) if $pos != $size;
    return \@entries;
}

# ---------------------------------------------------------------------------
# Socket
# ---------------------------------------------------------------------------

# new(%options)
#   endpoints      array reference of endpoints to connect (tcp://host:port,
#                  ipc:///path); required. Messages from all of them are
#                  fair-queued.
#   hwm            receive high-water mark in messages (ZMQ_RCVHWM)
#   heartbeat      ZMTP heartbeat interval in ms (ZMQ_HEARTBEAT_IVL): a peer
#                  that stops answering is dropped and reconnected
#   heartbeat_timeout  ms without traffic before that (default 3 x heartbeat)
#   reconnect_ivl  ms between reconnection attempts (default 100). libzmq
#                  reconnects a PULL socket by itself when the server restarts.
#   max_frame      largest frame accepted in bytes (ZMQ_MAXMSGSIZE); a bigger
#                  frame drops the connection, which then reconnects.
#                  Default: no limit (a Redis string can be 512 MB).
#   on_error       called as on_error->($reason, $frames) for a malformed
#                  message, which is then skipped; default: warn.
#   curve_server_key  the server's CURVE public key (Z85, 40 characters;
#                  INFO expiry_zmq_curve_public_key): connect with CURVE
#                  (ZMQ_CURVE_SERVERKEY), for a server with
#                  expiry-zmq-curve-secret-key
#   curve_secret_key  this listener's CURVE secret key (Z85), required
#                  with curve_server_key; its public key, derived (or given
#                  as curve_public_key), must be in the server's
#                  expiry-zmq-curve-allowed-keys
#   dedup          how many message ids (frame 4) to remember (default
#                  100000; 0: none): run() drops a message whose id is among
#                  them, the same expiry reported again (the key expiring
#                  once more after a crash or on a promoted replica)
sub new {
    my ($class, %opt) = @_;
    my $endpoints = $opt{endpoints};
    croak 'endpoints: an array reference with at least one endpoint is required'
        if ref $endpoints ne 'ARRAY' || !@$endpoints;
    for my $name (qw(hwm heartbeat heartbeat_timeout reconnect_ivl max_frame dedup)) {
        croak "$name must be a non-negative integer"
            if defined $opt{$name} && $opt{$name} !~ /\A[0-9]+\z/;
    }
    my $on_error = $opt{on_error} // sub {
        my ($reason) = @_;
        warn "zredis expiry listener: skipped a malformed message: $reason";
    };
    croak 'on_error must be a code reference' if ref $on_error ne 'CODE';
    my @curve;
    if (defined $opt{curve_server_key} || defined $opt{curve_secret_key}) {
        croak 'curve_server_key and curve_secret_key go together'
            if !defined $opt{curve_server_key} || !defined $opt{curve_secret_key};
        for my $name (qw(curve_server_key curve_secret_key curve_public_key)) {
            croak "$name must be a CURVE key: 40 Z85 characters"
                if defined $opt{$name} && !_is_z85_key($opt{$name});
        }
        my $public = $opt{curve_public_key} // curve_public($opt{curve_secret_key});
        @curve = ($opt{curve_server_key}, $public, $opt{curve_secret_key});
    }

    my $ctx  = ZMQ::FFI->new;
    my $sock = $ctx->socket(ZMQ_PULL);
    $sock->set(ZMQ_RCVHWM, 'int', $opt{hwm}) if defined $opt{hwm};
    $sock->set(ZMQ_RECONNECT_IVL, 'int', $opt{reconnect_ivl} // 100);
    if ($opt{heartbeat}) {
        $sock->set(ZMQ_HEARTBEAT_IVL, 'int', $opt{heartbeat});
        $sock->set(ZMQ_HEARTBEAT_TIMEOUT, 'int', $opt{heartbeat_timeout} // 3 * $opt{heartbeat});
    }
    $sock->set(ZMQ_MAXMSGSIZE, 'int64_t', $opt{max_frame}) if $opt{max_frame};
    $sock->set(ZMQ_RCVTIMEO, 'int', STOP_CHECK_MS);
    if (@curve) {
        # libzmq reads a 40-character option value as a Z85 key.
        $sock->set(ZMQ_CURVE_SERVERKEY, 'string', $curve[0]);
        $sock->set(ZMQ_CURVE_PUBLICKEY, 'string', $curve[1]);
        $sock->set(ZMQ_CURVE_SECRETKEY, 'string', $curve[2]);
    }
    for my $endpoint (@$endpoints) {
        eval { $sock->connect($endpoint); 1 }
            or croak "connect $endpoint: " . ($@ =~ s/\n.*//sr);
    }
    # From here on receive errors are read from last_errno: a timeout or an
    # interrupted call is the normal way for run() to look at its stop flag.
    $sock->die_on_error(0);

    return bless {
        ctx       => $ctx,
        sock      => $sock,
        more      => _more_function($sock),
        on_error  => $on_error,
        endpoints => [@$endpoints],
        stopping  => 0,
        dedup     => $opt{dedup} // DEDUP_DEFAULT,
        seen_ids  => {},    # the ids remembered, for the look-up
        seen_fifo => [],    # the same ids, oldest first, to forget them
        dropped   => 0,
    }, $class;
}

sub endpoints { return @{ $_[0]{endpoints} } }

# ---------------------------------------------------------------------------
# CURVE keys
# ---------------------------------------------------------------------------

my $Z85_KEY = qr{\A[0-9a-zA-Z.\-:+=^!/*?&<>()\[\]{}\@%\$#]{40}\z};

sub _is_z85_key { return defined $_[0] && $_[0] =~ $Z85_KEY }

my $zmq_curve_public;

# curve_public($secret) returns the Z85 public key of a Z85 secret key
# (libzmq's zmq_curve_public, which ZMQ::FFI does not wrap).
sub curve_public {
    my ($secret) = @_;
    croak 'curve_public: a CURVE secret key is 40 Z85 characters' if !_is_z85_key($secret);
    $zmq_curve_public //= do {
        require FFI::Platypus;
        require ZMQ::FFI::Util;
        FFI::Platypus->new(api => 1, lib => [ ZMQ::FFI::Util::zmq_soname(die => 1) ])
            ->function(zmq_curve_public => [ 'string', 'string' ] => 'int');
    };
    my $public = "\0" x 41;    # written by zmq_curve_public: 40 characters and a NUL
    $zmq_curve_public->call($public, $secret) == 0 or croak "zmq_curve_public failed";
    $public =~ s/\0.*//s;
    return $public;
}

# curve_keypair() returns a new (public, secret) pair of Z85 keys.
sub curve_keypair { return map { s/\0.*//sr } ZMQ::FFI->new->curve_keypair }

# _more_function returns a function telling whether the frame just received
# has more frames after it. ZMQ::FFI's get(ZMQ_RCVMORE) costs two foreign
# calls and a dispatch on the option type, about 1.7 us, three times per
# message: most of the receive cost. zmq_msg_more on the zmq_msg_t that
# ZMQ::FFI receives into is one call. That zmq_msg_t is ZMQ::FFI's own
# attribute (_zmq_msg_t, present in 1.x), so where it or the function
# cannot be had, the documented get() is used.
my $msg_more_attached;
sub _more_function {
    my ($sock) = @_;
    my $msg = eval {
        if (!$msg_more_attached) {
            require FFI::Platypus;
            FFI::Platypus->new(api => 1, lib => [ $sock->soname ])
                ->attach([ zmq_msg_more => '_zmq_msg_more' ] => ['opaque'] => 'int');
            $msg_more_attached = 1;
        }
        $sock->_zmq_msg_t;
    };
    return sub { _zmq_msg_more($msg) } if $msg;
    return sub { $sock->get(ZMQ_RCVMORE, 'int') };
}

# recv_frames waits for the next message and returns its frames as an array
# reference, or undef once stop() was called. A message of more than four
# frames is not kept beyond the count of its frames: it is malformed anyway.
sub recv_frames {
    my ($self) = @_;
    my ($sock, $more) = @$self{qw(sock more)};
    while (!$self->{stopping}) {
        my $first = $sock->recv;
        if (my $errno = $sock->last_errno) {
            next if $errno == EAGAIN || $errno == EINTR;
            croak 'receive: ' . $sock->last_strerror;
        }
        my @frames = ($first);
        my $extra  = 0;
        # The rest of a multipart message is already here: libzmq hands a
        # message over only once all of its frames arrived.
        while ($more->()) {
            my $frame = $sock->recv;
            croak 'receive: ' . $sock->last_strerror if $sock->last_errno;
            if (@frames < 4) { push @frames, $frame } else { $extra++ }
        }
        push @frames, (undef) x $extra if $extra;
        return \@frames;
    }
    return undef;
}

# run($callback) receives and decodes messages until stop() is called,
# calling $callback->($msg) for each (see decode for $msg). A malformed
# message goes to on_error and is skipped; a duplicate (see seen_before) is
# counted and skipped. Returns the number of messages handed to $callback. Safe to call stop() from the callback or from a
# signal handler: run() returns within STOP_CHECK_MS. A stop() that comes
# before run() (a signal during start-up) makes it return at once; the
# request is cleared when run() returns, so a later run() receives again.
sub run {
    my ($self, $callback) = @_;
    croak 'run needs a code reference' if ref $callback ne 'CODE';
    my $handled = 0;
    while (defined(my $frames = $self->recv_frames)) {
        my $msg = eval { decode($frames) };
        if (!$msg) {
            $self->{on_error}->($@, $frames);
            next;
        }
        if ($self->seen_before($msg)) {
            $self->{dropped}++;
            next;
        }
        $handled++;
        $callback->($msg);
    }
    $self->{stopping} = 0;
    return $handled;
}

sub stop { $_[0]{stopping} = 1; return }

# seen_before($msg) tells whether the message's id is among the last ids
# remembered (the dedup option), and remembers it otherwise. A message
# without an id is never seen before. A repeat does not refresh its id:
# the window counts messages from the first report of an event, so that a
# listener running for months stays bounded by the option.
sub seen_before {
    my ($self, $msg) = @_;
    my $id = $msg->{id};
    return 0 if !defined $id || !$self->{dedup};
    return 1 if $self->{seen_ids}{$id};
    my $fifo = $self->{seen_fifo};
    push @$fifo, $id;
    $self->{seen_ids}{$id} = 1;
    delete $self->{seen_ids}{ shift @$fifo } if @$fifo > $self->{dedup};
    return 0;
}

# duplicates_dropped is the count of messages run() dropped as duplicates.
sub duplicates_dropped { return $_[0]{dropped} }

# close disconnects and releases the socket and its context; the object is
# unusable afterwards. Called by DESTROY too.
sub close {
    my ($self) = @_;
    my $sock = delete $self->{sock} or return;
    $sock->close;
    my $ctx = delete $self->{ctx};
    $ctx->destroy;
    return;
}

sub DESTROY {
    my ($self) = @_;
    local $@;
    eval { $self->close };
    return;
}

1;

__END__

=head1 NAME

ZRedis::ExpiryListener - receive and decode the expired keys zredis pushes over 0MQ

=head1 SYNOPSIS

    use ZRedis::ExpiryListener qw(decode);

    my $listener = ZRedis::ExpiryListener->new(
        endpoints => ['tcp://127.0.0.1:5555'],
        hwm       => 10000,
        heartbeat => 5000,
        on_error  => sub { my ($reason, $frames) = @_; warn "skipped: $reason" },
    );
    local $SIG{INT} = local $SIG{TERM} = sub { $listener->stop };
    $listener->run(sub {
        my ($msg) = @_;
        printf "db %d %s %s\n", $msg->{db}, $msg->{type}, $msg->{key};
    });
    $listener->close;

    # Decoding alone (frames from any 0MQ binding):
    my $msg = eval { decode([$header, $key_frame, $value_frame]) }
        or warn "malformed: $@";

=head1 DESCRIPTION

zredis sends one 0MQ message of three frames for every key that expires (four
with C<expiry-zmq-message-id yes>), on a PUSH socket bound to each
C<expiry-zmq-endpoints> endpoint. This module
connects a PULL socket (ZMQ::FFI) to those endpoints and decodes the
messages. All integers are in the server's native byte order, which is the
byte order this module unpacks (C<S>, C<L>): run the listener on a machine of
the same byte order as the server (every x86-64 and arm64 machine is
little-endian).

=over

=item frame 1

4 bytes: uint16 database, uint16 type (0 string, 1 hash, 2 list, 3 set,
4 zset, 5 stream, 6 hash-fields; 2 to 6 only when the server was told to
send them).

=item frame 2

uint32 key length, then the key (for hash-fields, the hash's key).

=item frame 3

string: uint32 length and the bytes. hash: uint32 count of fields plus
values (even), then each field and each value as uint32 length and bytes.
list/set: uint32 count and each member length-prefixed. zset: uint32 count
(2 per member), then member and score pairs in score order, each
length-prefixed, the score as text (C<1.5>, C<inf>). stream: uint32 count of
entries, then for each entry in ID order its ID (C<1700000000000-0>)
length-prefixed, a uint32 count of its fields plus values (even), and each
field and each value length-prefixed (consumer groups are not sent).
hash-fields: as a hash, holding only the fields that expired on their own
(per-field expiry) and their values; the fields of one hash that fall due in
the same millisecond come in one message.

=item frame 4

Only with C<expiry-zmq-message-id yes>: the message id, ASCII text
C<< <ms>-<hash> >> (C<1764633600123-c16520f3790e34f7>): ms the event's Unix
time in milliseconds (the deadline that fell due; for an evicted key, the
time of the eviction), hash the FNV-1a 64-bit hash of frame 1 then frame 2
as 16 lowercase hex digits. The same expiry reported again (the key
expiring once more after a crash, or on the replica promoted after a
failover) carries the same id. Treat it as opaque text compared for
equality, except that its first part is the event's time.

=back

libzmq reconnects by itself when the server restarts; messages the server
could not deliver wait in its outbox.

=head1 FUNCTIONS

=head2 decode($frames)

Decodes one message (an array reference of three byte strings, or four with
a message id) into a hash reference with C<db>, C<type> (name),
C<type_code>, C<key>, C<value>, C<id> (the message id, undef without one)
and C<parts> (frame 3's items in order; use it where the order of a hash's
fields matters). C<value> is the string, a hash reference for a hash (and
for hash-fields, of the expired fields only), an array reference of members
for a list or set, an array reference of C<[member, score]> for a zset, an
array reference of C<[id, [field, value, ...]]> for a stream (entries in ID order, as XRANGE replies; C<parts> holds
the same). Dies with a one-line reason for a malformed message: a frame
count other than 3 or 4, a message id that is not C<< <ms>-<hash> >> or
not the hash of its frames, a header that is not 4 bytes, an unknown type, a length
or count that runs past its frame, trailing bytes, an odd count for a hash,
hash-fields, a zset or a stream entry.

=head2 curve_public($secret)

The Z85 public key of a Z85 CURVE secret key.

=head2 curve_keypair

A new CURVE key pair, C<($public, $secret)>, in Z85.

=head2 type_name($code)

The name of a type code, undef for an unknown code.

=head1 METHODS

=head2 new(%options)

C<endpoints> (required, array reference), C<hwm> (ZMQ_RCVHWM), C<heartbeat>
(ms, ZMQ_HEARTBEAT_IVL), C<heartbeat_timeout> (ms, default 3 x heartbeat),
C<reconnect_ivl> (ms, default 100), C<max_frame> (bytes, ZMQ_MAXMSGSIZE;
default no limit), C<on_error> (called with the reason and the frames of a
malformed message; default: warn), C<dedup> (how many message ids to
remember, default 100000; 0 turns duplicate dropping off).

With CURVE on the server (C<expiry-zmq-curve-secret-key>): C<curve_server_key>
(the server's public key, Z85, as C<INFO expiry> shows it in
C<expiry_zmq_curve_public_key>) and C<curve_secret_key> (this listener's
secret key, Z85); the public key is derived, or given as
C<curve_public_key>, and must be in the server's
C<expiry-zmq-curve-allowed-keys>. A listener the server refuses receives
nothing, and libzmq does not retry it: create it again once its key is
allowed.

=head2 run($callback)

Receives until C<stop> is called, calling C<< $callback->($msg) >> for each
message. Returns the count of messages handled. A message whose id was seen
among the last C<dedup> ids reports an expiry already handled: it is not
handed to the callback, and is counted in C<duplicates_dropped>. A message
without an id is always handed over.

=head2 seen_before($msg)

True when the id of a decoded message is among the last C<dedup> ids seen;
otherwise remembers it (the oldest is forgotten past C<dedup>) and returns
false. False for a message without an id. C<run> calls it for each message;
call it yourself when receiving with C<recv_frames> and C<decode>.

=head2 duplicates_dropped

The count of messages C<run> dropped as duplicates.

=head2 stop

Makes C<run> return (within 200 ms), or the next C<run> return at once
when none is running; safe in a signal handler.

=head2 recv_frames

The frames of the next message without decoding (undef after C<stop>).

=head2 close

Closes the socket and its context.

=cut
