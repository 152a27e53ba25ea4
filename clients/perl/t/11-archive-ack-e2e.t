# End to end: the archiving example with --ack against the real
# zredis-server running the hash expire cycles. The example archives the
# expired hash and deletes it, so the server sends it once and no more;
# a hash in another database (not cycled) is archived, not acknowledged.

use strict;
use warnings;

use FindBin qw($Bin);
use lib "$Bin/lib", "$Bin/../lib";

use File::Temp qw(tempdir);
use IO::Socket::INET;
use POSIX qw(WNOHANG);
use Test::More;
use Time::HiRes qw(sleep);
use ZRedisTest::RESP;
use ZRedisTest::Vectors qw(repo_root perl_client_dir);

my $server_bin = repo_root() . '/bin/zredis-server';
if (!-x $server_bin) {
    # make test sets ZREDIS_TEST_REQUIRE_ALL: a missing binary fails there.
    BAIL_OUT("$server_bin does not exist: run `make build` in the repository root") if ($ENV{ZREDIS_TEST_REQUIRE_ALL} // "") !~ /^0?\z/;
    plan skip_all => "$server_bin does not exist: run `make build` in the repository root";
}

my $tmp        = tempdir(CLEANUP => 1);
my $redis_port = ZRedisTest::RESP::free_port();
my $endpoint   = 'tcp://127.0.0.1:' . ZRedisTest::RESP::free_port();
my $log        = "$tmp/server.log";

my ($server_pid, $example_pid) = (0, 0);
END {
    for my $pid (grep {$_} $example_pid, $server_pid) {
        kill 'TERM', $pid;
        for (1 .. 100) { last if waitpid($pid, WNOHANG) == $pid; sleep 0.1 }
        if (kill 0, $pid) { kill 'KILL', $pid; waitpid $pid, 0 }
    }
}

$server_pid = fork // die "fork: $!";
if (!$server_pid) {
    open STDOUT, '>>', $log or die "log: $!";
    open STDERR, '>&', \*STDOUT or die "log: $!";
    exec $server_bin, '--port', $redis_port, '--bind', '127.0.0.1', '--requirepass', 'pw',
        '--expiry-zmq-endpoints', $endpoint, '--expiry-zmq-hash-max-expire-cycles', 3,
        '--expiry-zmq-hash-delay', 200, '--expiry-zmq-hash-delay-jitter', 0,
        '--save', '', '--appendonly', 'no', '--dir', $tmp
        or die "exec: $!";
}
my $redis;
for (1 .. 300) {
    last if $redis = ZRedisTest::RESP->connect($redis_port);
    sleep 0.1;
}
ok($redis, 'the server answers') or BAIL_OUT("server log:\n" . do { local (@ARGV, $/) = $log; <> });
is($redis->command('AUTH', 'pw'), 'OK', 'AUTH');

my $archive = "$tmp/archive";
$example_pid = fork // die "fork: $!";
if (!$example_pid) {
    exec $^X, '-I' . perl_client_dir() . '/lib', perl_client_dir() . '/examples/archive-by-day.pl',
        '--endpoint', $endpoint, '--dir', $archive, '--count', 2,
        '--ack', "127.0.0.1:$redis_port", '--ack-password', 'pw'
        or die "exec: $!";
}

# Wait for the example's connection before anything expires.
for (1 .. 200) {
    last if ($redis->command('INFO', 'expiry') // '') =~ /expiry_zmq_listeners:1/;
    sleep 0.05;
}
is($redis->command('HSET', 'mail:1', 'body', 'hello'), 1, 'HSET mail:1');
is($redis->command('PEXPIRE', 'mail:1', 20), 1, 'PEXPIRE mail:1');
is($redis->command('SELECT', 3), 'OK', 'SELECT 3');
is($redis->command('HSET', 'mail:3', 'body', 'other'), 1, 'HSET mail:3 in db 3');
is($redis->command('PEXPIRE', 'mail:3', 20), 1, 'PEXPIRE mail:3');

local $SIG{ALRM} = sub { kill 'KILL', $example_pid };
alarm 30;
waitpid $example_pid, 0;
alarm 0;
is($?, 0, 'the example exits after --count hashes');
$example_pid = 0;

is($redis->command('SELECT', 0), 'OK', 'SELECT 0');
is($redis->command('EXISTS', 'mail:1'), 0, 'mail:1 acknowledged: deleted');
sleep 0.6;    # past the cycles' delay: nothing more is sent
my $info = $redis->command('INFO', 'expiry');
like($info, qr/expiry_messages_resent:0\r\n/, 'no hash sent again');
like($info, qr/expiry_messages_sent:2\r\n/, 'two messages in all');

my @lines = map { open my $fh, '<:raw', $_ or die "$_: $!"; <$fh> } glob "$archive/*.jsonl";
is(scalar @lines, 2, 'both hashes archived once');
done_testing;
