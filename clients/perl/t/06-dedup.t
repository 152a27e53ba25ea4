# Duplicate dropping: a message whose id (frame 4) was seen among the last
# dedup ids is not handed to run()'s callback, and is counted. A PUSH
# socket on a loopback port plays the server.

use strict;
use warnings;

use FindBin qw($Bin);
use lib "$Bin/lib", "$Bin/../lib";

use File::Temp qw(tempdir);
use Test::More;
use ZMQ::FFI ();
use ZMQ::FFI::Constants qw(ZMQ_PUSH ZMQ_SNDTIMEO ZMQ_LAST_ENDPOINT);
use ZRedis::ExpiryListener;
use ZRedisTest::Vectors qw(encode_frames perl_client_dir);

# A string message of key $key, with the id of an event at Unix ms $at
# when $at is given.
sub message {
    my ($key, $at) = @_;
    my $frames = encode_frames(0, 0, $key, ['v']);
    push @$frames, "$at-" . ZRedis::ExpiryListener::_fnv1a64_hex($frames->[0] . $frames->[1]) if defined $at;
    return $frames;
}
my ($ma, $mb, $mc) = (message('a', 1764633600123), message('b', 1764633600123), message('a', 1764633600124));
my $last = message('last');

# A PUSH socket bound to a loopback port; sends give up after 10 s rather
# than hang the test when no listener connects.
sub push_socket {
    my $ctx  = ZMQ::FFI->new;
    my $push = $ctx->socket(ZMQ_PUSH);
    $push->set(ZMQ_SNDTIMEO, 'int', 10_000);
    $push->set_linger(2000);
    $push->bind('tcp://127.0.0.1:*');
    return ($ctx, $push, $push->get(ZMQ_LAST_ENDPOINT, 'string'));
}

# receive sends @msgs to a listener made with %opt and returns the keys
# and ids handed to the callback and the count dropped. Every sequence
# ends with $last, which has no id: run() stops on it.
sub receive {
    my ($msgs, %opt) = @_;
    my ($ctx, $push, $endpoint) = push_socket();
    my $listener = ZRedis::ExpiryListener->new(endpoints => [$endpoint], %opt);
    $push->send_multipart($_) for @$msgs, $last;
    my @got;
    my $handled = $listener->run(sub {
        my ($msg) = @_;
        push @got, $msg->{key} . (defined $msg->{id} ? " $msg->{id}" : '');
        $listener->stop if $msg->{key} eq 'last';
    });
    is($handled, scalar @got, 'run() counts the messages handed over only');
    my $dropped = $listener->duplicates_dropped;
    $listener->close;
    $push->close;
    $ctx->destroy;
    return (\@got, $dropped);
}

my ($id_a, $id_b, $id_c) = map { $_->[3] } $ma, $mb, $mc;

subtest 'a duplicate is dropped, another id passes' => sub {
    my ($got, $dropped) = receive([ $ma, $mb, $ma, $mc, $ma, $mb ]);
    is_deeply($got, [ "a $id_a", "b $id_b", "a $id_c", 'last' ], 'each event once; the same key at another time is another event');
    is($dropped, 3, 'duplicates_dropped');
};

subtest 'messages without an id are never dropped' => sub {
    my ($got, $dropped) = receive([ message('x'), message('x') ]);
    is_deeply($got, [ 'x', 'x', 'last' ], 'both handed over');
    is($dropped, 0, 'none dropped');
};

subtest 'dedup => 0 keeps both' => sub {
    my ($got, $dropped) = receive([ $ma, $ma ], dedup => 0);
    is_deeply($got, [ "a $id_a", "a $id_a", 'last' ], 'both handed over');
    is($dropped, 0, 'none dropped');
};

subtest 'the window forgets the oldest id' => sub {
    # a and b fill the window; c pushes a out, a comes back in.
    my ($got, $dropped) = receive([ $ma, $mb, $ma, $mc, $ma, $mc ], dedup => 2);
    is_deeply($got, [ "a $id_a", "b $id_b", "a $id_c", "a $id_a", 'last' ], 'a forgotten once c came');
    is($dropped, 2, 'the repeats inside the window dropped');
};

subtest 'seen_before without receiving' => sub {
    my $listener = ZRedis::ExpiryListener->new(endpoints => ['tcp://127.0.0.1:1'], dedup => 2);
    ok(!$listener->seen_before({ id => undef }), 'no id: never seen');
    ok(!$listener->seen_before({ id => $id_a }), 'first a');
    ok($listener->seen_before({ id => $id_a }), 'a again');
    ok(!$listener->seen_before({ id => $id_b }), 'b');
    ok(!$listener->seen_before({ id => $id_c }), 'c, the window full: a forgotten');
    ok(!$listener->seen_before({ id => $id_a }), 'a anew');
    is($listener->duplicates_dropped, 0, 'seen_before counts nothing: run() does');
    $listener->close;
};

for my $bad (-1, 'many') {
    ok(!eval { ZRedis::ExpiryListener->new(endpoints => ['tcp://127.0.0.1:1'], dedup => $bad); 1 }, "dedup => $bad refused");
    like($@, qr/dedup must be a non-negative integer/, "dedup => $bad: reason");
}

subtest 'the script drops duplicates and says how many at exit' => sub {
    my $stderr = tempdir(CLEANUP => 1) . '/stderr';
    for my $case ([ [], 1 ], [ [ '--dedup', 0 ], 0 ]) {
        my ($args, $dropped) = @$case;
        my ($ctx, $push, $endpoint) = push_socket();
        my $pid = open(my $out, '-|') // die "fork: $!";
        if (!$pid) {
            open STDERR, '>', $stderr or die "stderr: $!";
            exec $^X, '-I' . perl_client_dir() . '/lib', perl_client_dir() . '/bin/zredis-expiry-listener',
                '--endpoint', $endpoint, '--count', 3 - $dropped, @$args or die "exec: $!";
        }
        $push->send_multipart($_) for $ma, $ma, $last;
        local $SIG{ALRM} = sub { kill 'KILL', $pid };
        alarm 60;
        my @lines = <$out>;
        close $out;
        alarm 0;
        is($?, 0, "@$args: exit status 0");
        is(scalar @lines, 3 - $dropped, "@$args: a line per message handed over");
        my $err = do { open my $fh, '<', $stderr or die "$stderr: $!"; local $/; <$fh> };
        is($err, $dropped ? "zredis-expiry-listener: dropped $dropped duplicate messages\n" : '', "@$args: stderr");
        $push->close;
        $ctx->destroy;
    }
};

done_testing;
