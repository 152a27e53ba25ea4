# End to end with CURVE: zredis-server with expiry-zmq-curve-secret-key and
# one allowed listener key. The Perl listener holding that key receives
# every message; a plain one and one with an unknown key receive nothing
# and are counted refused; the script with --curve-server-key and a key
# file receives its messages too.

use strict;
use warnings;

use FindBin qw($Bin);
use lib "$Bin/lib", "$Bin/../lib";

use File::Temp qw(tempdir);
use POSIX qw(WNOHANG);
use Test::More;
use Time::HiRes qw(sleep);
use ZRedis::ExpiryListener qw(curve_keypair curve_public);
use ZRedisTest::RESP;
use ZRedisTest::Vectors qw(repo_root);

my $root       = repo_root();
my $server_bin = "$root/bin/zredis-server";
if (!-x $server_bin) {
    # make test sets ZREDIS_TEST_REQUIRE_ALL: a missing binary fails there.
    BAIL_OUT("$server_bin does not exist: run `make build` in the repository root") if ($ENV{ZREDIS_TEST_REQUIRE_ALL} // "") !~ /^0?\z/;
    plan skip_all => "$server_bin does not exist: run `make build` in the repository root";
}

my $tmp        = tempdir(CLEANUP => 1);
my $redis_port = ZRedisTest::RESP::free_port();
my $endpoint   = 'tcp://127.0.0.1:' . ZRedisTest::RESP::free_port();
my $log        = "$tmp/server.log";

my ($server_public, $server_secret) = curve_keypair();
my ($allowed_public, $allowed_secret) = curve_keypair();
my (undef, $unknown_secret) = curve_keypair();
is(curve_public($allowed_secret), $allowed_public, 'curve_public derives the public key');
is(curve_public('D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs'), 'Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID',
    "curve_public on libzmq's test key");

open my $conf, '>', "$tmp/zredis.conf" or die "conf: $!";
print $conf qq{expiry-zmq-curve-secret-key "$server_secret"\n}, qq{expiry-zmq-curve-allowed-keys "$allowed_public"\n};
close $conf;

my $server_pid = fork // die "fork: $!";
if (!$server_pid) {
    open STDOUT, '>>', $log or die "log: $!";
    open STDERR, '>&', \*STDOUT or die "log: $!";
    exec $server_bin, "$tmp/zredis.conf", '--port', $redis_port, '--bind', '127.0.0.1',
        '--expiry-zmq-endpoints', $endpoint, '--save', '', '--appendonly', 'no', '--dir', $tmp
        or die "exec: $!";
}
END {
    if ($server_pid) {
        kill 'TERM', $server_pid;
        waitpid $server_pid, 0;
    }
}
my $redis;
for (1 .. 300) {
    last if $redis = ZRedisTest::RESP->connect($redis_port);
    BAIL_OUT('zredis-server exited at start') if waitpid($server_pid, WNOHANG) == $server_pid;
    sleep 0.1;
}
BAIL_OUT('zredis-server did not accept connections') if !$redis;

sub info {
    my %info = map { split /:/, $_, 2 } grep { /:/ } split /\r\n/, $redis->command('INFO', 'expiry');
    return \%info;
}
sub wait_info {
    my ($field, $ok) = @_;
    for (1 .. 200) {
        return 1 if $ok->(info()->{$field} // '');
        sleep 0.05;
    }
    return 0;
}
sub expire_keys {
    my ($prefix, $n) = @_;
    $redis->command('SET', "$prefix$_", "value$_", 'PX', 1) for 1 .. $n;
}
# drain receives from a listener for $seconds and returns the keys.
sub drain {
    my ($listener, $seconds, $want) = @_;
    my @keys;
    local $SIG{ALRM} = sub { $listener->stop };
    Time::HiRes::alarm($seconds);
    $listener->run(sub {
        push @keys, $_[0]{key};
        $listener->stop if defined $want && @keys >= $want;
    });
    Time::HiRes::alarm(0);
    $listener->{stopping} = 0;
    return @keys;
}

is(info()->{expiry_zmq_curve_public_key}, $server_public, 'INFO shows the public key derived from the secret');

my %common = (endpoints => [$endpoint], reconnect_ivl => 50);
my $plain   = ZRedis::ExpiryListener->new(%common);
my $unknown = ZRedis::ExpiryListener->new(%common, curve_server_key => $server_public, curve_secret_key => $unknown_secret);
ok(wait_info('expiry_zmq_curve_refused', sub { $_[0] >= 2 }), 'the plain and unknown listeners are refused');
my $allowed = ZRedis::ExpiryListener->new(%common, curve_server_key => $server_public, curve_secret_key => $allowed_secret);
ok(wait_info('expiry_zmq_listeners', sub { $_[0] == 1 }), 'the allowed listener is connected');

expire_keys('perl:', 50);
my @got = drain($allowed, 20, 50);
is(scalar(@got), 50, 'the allowed listener receives every message');
is_deeply([sort @got], [sort map {"perl:$_"} 1 .. 50], '... each key once');
is(scalar(drain($plain, 0.3)), 0, 'the plain listener receives nothing');
is(scalar(drain($unknown, 0.1)), 0, 'the unknown key receives nothing');
$allowed->close;
ok(wait_info('expiry_zmq_listeners', sub { $_[0] == 0 }), 'the allowed listener left');

# The script, its secret key in a file.
my $keyfile = "$tmp/listener.key";
open my $kf, '>', $keyfile or die "key: $!";
print $kf "# a key pair\npublic-key = $allowed_public\nsecret-key = $allowed_secret\n";
close $kf;
my $script = "$Bin/../bin/zredis-expiry-listener";
my $pid = open(my $out, '-|', $^X, "-I$Bin/../lib", $script, '--endpoint', $endpoint, '--count', 3,
    '--curve-server-key', $server_public, '--curve-secret-key-file', $keyfile) // die "script: $!";
ok(wait_info('expiry_zmq_listeners', sub { $_[0] == 1 }), 'the script is connected');
expire_keys('script:', 3);
my @lines = <$out>;
close $out;
is(scalar(grep { /"key":"script:\d"/ } @lines), 3, 'the script prints every message') or diag(@lines);

my $server_log = do { open my $fh, '<', $log or die; local $/; <$fh> };
unlike($server_log, qr/\Q$server_secret\E/, 'the secret key is not in the log');
is_deeply($redis->command('CONFIG', 'GET', 'expiry-zmq-curve-secret-key'), ['expiry-zmq-curve-secret-key', '(redacted)'],
    'CONFIG GET shows it redacted');

$plain->close;
$unknown->close;
done_testing;
