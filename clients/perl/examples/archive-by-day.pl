#!/usr/bin/perl
# Archives the hashes zredis expires: each one is appended, as one JSON
# line (the listener's --format json line), to DIR/YYYY-MM-DD.jsonl, a file
# per day (UTC, the day the message arrived). Lines are flushed as they are
# written, so a crash loses at most the message being handled; the server
# keeps what it could not deliver while this is down.
#
#   perl examples/archive-by-day.pl --endpoint tcp://127.0.0.1:5555 --dir /var/lib/zredis-archive
#
# --all-types archives every type, not only hashes; --count N exits after
# N archived messages.

use strict;
use warnings;

use Getopt::Long qw(GetOptions);
use POSIX qw(strftime);
use ZRedis::ExpiryListener;
use ZRedis::ExpiryListener::Format qw(to_json_line);

my %opt = (endpoint => []);
GetOptions(\%opt, 'endpoint=s@', 'dir=s', 'all-types', 'count=i')
    && @{ $opt{endpoint} } && defined $opt{dir}
    or die "usage: $0 --endpoint EP [--endpoint EP ...] --dir DIR [--all-types] [--count N]\n";
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

    $listener->stop if $opt{count} && ++$archived >= $opt{count};
});
close $out or die "close: $!\n" if $out;
$listener->close;
