#!/usr/bin/perl
# Measures how many expiry messages per second ZRedis::ExpiryListener
# receives and decodes: a child process pushes --count small messages
# (a string key of ~10 bytes, a value of ~16 bytes) over loopback TCP
# and the parent runs the listener, timed from the first message to the
# last.
#
#   perl -Ilib bench/recv-rate.pl [--count 200000] [--no-decode]

use strict;
use warnings;

use FindBin qw($Bin);
use lib "$Bin/../lib";

use Getopt::Long qw(GetOptions);
use IO::Socket::INET;
use Time::HiRes qw(time);
use ZMQ::FFI ();
use ZMQ::FFI::Constants qw(ZMQ_PUSH ZMQ_SNDHWM);
use ZRedis::ExpiryListener;

my %opt = (count => 200_000);
GetOptions(\%opt, 'count=i', 'no-decode') or die "usage: $0 [--count N] [--no-decode]\n";

my $port = do {
    my $s = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0) or die "port: $!";
    $s->sockport;
};
my $endpoint = "tcp://127.0.0.1:$port";

# A few distinct messages, encoded once: the sender must outrun the
# receiver for the number to be the receiver's.
my @messages = map {
    [ pack('S S', 0, 0), pack('L/a*', "key:$_"), pack('L/a*', "value:$_" . ('x' x 8)) ]
} 1000 .. 1015;

my $sender = fork // die "fork: $!";
if (!$sender) {
    my $ctx  = ZMQ::FFI->new;
    my $push = $ctx->socket(ZMQ_PUSH);
    $push->set(ZMQ_SNDHWM, 'int', 100_000);
    $push->set_linger(-1);
    $push->bind($endpoint);
    $push->send_multipart($messages[ $_ % @messages ]) for 1 .. $opt{count};
    $push->close;
    $ctx->destroy;
    exit 0;
}

my $listener = ZRedis::ExpiryListener->new(endpoints => [$endpoint], hwm => 100_000);
my ($received, $first, $last) = (0, 0, 0);
if ($opt{'no-decode'}) {
    while (my $frames = $listener->recv_frames) {
        $first ||= time;
        last if ++$received == $opt{count};
    }
}
else {
    $listener->run(sub {
        $first ||= time;
        $listener->stop if ++$received == $opt{count};
    });
}
$last = time;
waitpid $sender, 0;
$listener->close;

my $seconds = $last - $first;
printf "%s %d messages in %.2f s: %.0f messages/s\n",
    ($opt{'no-decode'} ? 'received (no decode)' : 'received and decoded'),
    $received, $seconds, $seconds > 0 ? ($received - 1) / $seconds : 0;
