#!/usr/bin/perl
# Archives the hashes zredis expires: each one is appended, as one JSON
# line (the listener's --format json line), to DIR/YYYY-MM-DD.jsonl, a file
# per day (UTC, the day the message arrived). Lines are flushed as they are
# written, so a crash loses at most the message being handled; the server
# keeps what it could not deliver while this is down.
#
#   perl examples/archive-by-day.pl --endpoint tcp://127.0.0.1:5555 --dir /var/lib/zredis-archive
#
# --all-types archives every type, not only hashes (hash-fields, the fields
# of a hash that expired on their own, included); --count N exits after N
# archived messages.
#
# --ack HOST:PORT deletes each archived hash on the server (SELECT db, DEL
# key) once its line is written: the acknowledgement the server's hash
# expire cycles wait for (expiry-zmq-hash-max-expire-cycles), after which
# it sends the hash no more. --ack-password PW authenticates first;
# --ack-db N names the server's expiry-zmq-hash-main-db (0): only hashes
# of that database are acknowledged, and never hash-fields (the hash may
# still hold other fields). An acknowledgement that fails is warned about;
# the next cycle sends the hash again, and it is archived again.

use strict;
use warnings;

use Getopt::Long qw(GetOptions);
use IO::Socket::INET;
use POSIX qw(strftime);
use ZRedis::ExpiryListener;
use ZRedis::ExpiryListener::Format qw(to_json_line);

my %opt = (endpoint => []);
$opt{'ack-db'} = 0;
GetOptions(\%opt, 'endpoint=s@', 'dir=s', 'all-types', 'count=i', 'ack=s', 'ack-password=s', 'ack-db=i')
    && @{ $opt{endpoint} } && defined $opt{dir}
    or die "usage: $0 --endpoint EP [--endpoint EP ...] --dir DIR [--all-types] [--count N] [--ack HOST:PORT [--ack-password PW]]\n";
-d $opt{dir} or mkdir $opt{dir} or die "mkdir $opt{dir}: $!\n";

my $listener = ZRedis::ExpiryListener->new(
    endpoints => $opt{endpoint},
    heartbeat => 10_000,
    on_error  => sub { warn "skipped a malformed message: $_[0]" },
);
$SIG{INT} = $SIG{TERM} = sub { $listener->stop };

my ($day, $out) = ('');
my $archived = 0;
$listener->run(sub {
    my ($msg) = @_;
    return if $msg->{type} ne 'hash' && !$opt{'all-types'};

    my $today = strftime('%Y-%m-%d', gmtime);
    if ($today ne $day) {
        close $out or die "close: $!\n" if $out;
        my $path = "$opt{dir}/$today.jsonl";
        open $out, '>>:raw', $path or die "open $path: $!\n";
        $out->autoflush(1);
        $day = $today;
    }
    print {$out} to_json_line($msg) or die "write: $!\n";
    if ($opt{ack} && $msg->{type} eq 'hash' && $msg->{db} == $opt{'ack-db'}) {
        # Only the main database's hashes are kept for the cycles; any
        # other key is gone already, and one of that name now would be a
        # new one.
        eval { ack($msg->{db}, $msg->{key}); 1 }
            or warn "could not acknowledge $msg->{key} in db $msg->{db}: $@";
    }

    $listener->stop if $opt{count} && ++$archived >= $opt{count};
});
close $out or die "close: $!\n" if $out;
$listener->close;

# ack deletes key in database db over RESP, on one connection kept open
# (made again after a failure).
my ($ack_sock, $ack_db);
sub ack {
    my ($db, $key) = @_;
    if (!$ack_sock) {
        $ack_sock = IO::Socket::INET->new(PeerAddr => $opt{ack}, Timeout => 5)
            or die "connect $opt{ack}: $@\n";
        $ack_db = -1;
        resp_call('AUTH', $opt{'ack-password'}) if defined $opt{'ack-password'};
    }
    if ($db != $ack_db) {
        resp_call('SELECT', $db);
        $ack_db = $db;
    }
    resp_call('DEL', $key);
}

# resp_call sends one command and reads its one-line reply, dying on an
# error reply (and dropping the connection, so the next ack reconnects).
sub resp_call {
    my @args = @_;
    my $req = '*' . scalar(@args) . "\r\n";
    $req .= '$' . length($_) . "\r\n$_\r\n" for @args;
    my $ok = eval {
        print {$ack_sock} $req or die "write: $!\n";
        my $line = readline($ack_sock);
        die "connection closed\n" if !defined $line;
        die "server replied $line" if $line =~ /\A-/;
        1;
    };
    if (!$ok) {
        my $err = $@;
        close $ack_sock;
        undef $ack_sock;
        die $err;
    }
}
