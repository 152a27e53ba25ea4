# End to end: the real zredis-server expires keys and the listener receives
# each of them exactly once, decoded exactly. Strings and hashes (the types
# the server sends by default), binary keys and values, an empty string, a
# 10 MB value, a 10,000-field hash, several databases; and keys deleted
# before their deadline, which are not expiry and must not arrive.

use strict;
use warnings;

use FindBin qw($Bin);
use lib "$Bin/lib", "$Bin/../lib";

use File::Temp qw(tempdir);
use IO::Socket::INET;
use POSIX qw(WNOHANG);
use Test::More;
use Time::HiRes qw(sleep);
use ZRedis::ExpiryListener;
use ZRedisTest::RESP;
use ZRedisTest::Vectors qw(repo_root same_value);

my $server_bin = repo_root() . '/bin/zredis-server';
if (!-x $server_bin) {
    # make test sets ZREDIS_TEST_REQUIRE_ALL: a missing binary fails there.
    BAIL_OUT("$server_bin does not exist: run `make build` in the repository root") if ($ENV{ZREDIS_TEST_REQUIRE_ALL} // "") !~ /^0?\z/;
    plan skip_all => "$server_bin does not exist: run `make build` in the repository root";
}

my $tmp        = tempdir(CLEANUP => 1);
my $redis_port = ZRedisTest::RESP::free_port();
my $zmq_port   = ZRedisTest::RESP::free_port();
my $endpoint   = "tcp://127.0.0.1:$zmq_port";
my $log        = "$tmp/server.log";

# The listener connects first: libzmq retries until the server binds.
my @errors;
my $listener = ZRedis::ExpiryListener->new(
    endpoints     => [$endpoint],
    heartbeat     => 1000,
    reconnect_ivl => 50,
    on_error      => sub { push @errors, $_[0] },
);

my $server_pid = 0;
END { stop_server() if $server_pid }

# start_server starts zredis-server and returns a connection to it once it
# answers; when the server exits or does not answer in 30 s, the test
# fails with the server's log and ends.
sub start_server {
    $server_pid = fork // die "fork: $!";
    if (!$server_pid) {
        open STDOUT, '>>', $log or die "log: $!";
        open STDERR, '>&', \*STDOUT or die "log: $!";
        exec $server_bin, '--port', $redis_port, '--bind', '127.0.0.1',
            '--expiry-zmq-endpoints', $endpoint, '--save', '', '--appendonly', 'no', '--dir', $tmp
            or die "exec: $!";
    }
    for (1 .. 300) {
        my $conn = ZRedisTest::RESP->connect($redis_port);
        return $conn if $conn;
        if (waitpid($server_pid, WNOHANG) == $server_pid) {
            $server_pid = 0;
            give_up('zredis-server exited at start');
        }
        sleep 0.1;
    }
    give_up('zredis-server did not accept connections in 30 s');
}

sub give_up {
    my ($why) = @_;
    fail($why);
    diag("server log:\n" . server_log());
    done_testing;
    exit 1;
}

sub stop_server {
    return if !$server_pid;
    kill 'TERM', $server_pid;
    for (1 .. 100) {
        last if waitpid($server_pid, WNOHANG) == $server_pid;
        sleep 0.1;
    }
    if (kill 0, $server_pid) {
        kill 'KILL', $server_pid;
        waitpid $server_pid, 0;
    }
    $server_pid = 0;
}

sub server_log { open my $fh, '<', $log or return ''; local $/; return <$fh> }

my $redis = start_server();
is($redis->command('PING'), 'PONG', 'the server answers');

# What to store and what the listener must get back.
my $ten_mb = do {
    my $cycle = pack 'C*', 0 .. 250;
    substr $cycle x (10_485_760 / 251 + 1), 0, 10_485_760;
};
my $all_bytes = pack 'C*', 0 .. 255;
my @cases = (
    { db => 0,  type => 'string', key => 'e2e:empty',                value => '' },
    { db => 0,  type => 'string', key => "e2e:\x00bin\xff\r\n key",   value => $all_bytes x 3 },
    { db => 0,  type => 'string', key => 'e2e:10mb',                 value => $ten_mb },
    { db => 0,  type => 'string', key => "e2e:utf8:cl\xc3\xa9",      value => "na\xc3\xafve \xe2\x98\x83" },
    { db => 1,  type => 'hash',   key => 'e2e:hash:one',             fields => [ 'f1', 'v1' ] },
    { db => 3,  type => 'hash',   key => 'e2e:hash:10000',
      fields => [ map { ("field:$_", "value:$_") } 0 .. 9_999 ] },
    { db => 3,  type => 'hash',   key => "e2e:hash:\xffbin",
      fields => [ "\x00\xff", "\xff\x00\r\n", 'empty', '', "f\xc3\xa9", $all_bytes ] },
    { db => 15, type => 'string', key => 'e2e:db15',                 value => 'fifteen' },
    { db => 15, type => 'hash',   key => 'e2e:db15:hash',            fields => [ 'a', '1', 'b', '2' ] },
);

sub id { my ($db, $type, $key) = @_; return join "\0", $db, $type, unpack('H*', $key) }

my %want;
for my $case (@cases) {
    $case->{value} = { @{ $case->{fields} } } if $case->{type} eq 'hash';
    $want{ id(@$case{qw(db type key)}) } = $case;
}

sub select_db {
    my ($db) = @_;
    is($redis->command('SELECT', $db), 'OK', "SELECT $db");
}

# Keys deleted or made persistent before their deadline do not expire.
select_db(0);
is($redis->command('SET', 'e2e:deleted', 'x', 'PX', 60_000), 'OK', 'SET a key to delete');
is($redis->command('DEL', 'e2e:deleted'), 1, 'DEL it before its deadline');
is($redis->command('SET', 'e2e:persisted', 'x', 'PX', 60_000), 'OK', 'SET a key to persist');
is($redis->command('PERSIST', 'e2e:persisted'), 1, 'PERSIST it');

for my $case (@cases) {
    select_db($case->{db});
    my $name = "db $case->{db} $case->{type} " . unpack('H*', substr $case->{key}, 0, 24);
    if ($case->{type} eq 'string') {
        is($redis->command('SET', $case->{key}, $case->{value}), 'OK', "SET $name");
    }
    else {
        is($redis->command('HSET', $case->{key}, @{ $case->{fields} }), @{ $case->{fields} } / 2, "HSET $name");
    }
    is($redis->command('PEXPIRE', $case->{key}, 100), 1, "PEXPIRE $name 100");
}

# Receive until every key arrived (or 60 s passed), then for one second
# more: a key that arrives twice, or one that was not expected, fails.
my (%got, @duplicates, @unexpected, $complete);
local $SIG{ALRM} = sub { $listener->stop };
alarm 60;
$listener->run(sub {
    my ($msg) = @_;
    my $id = id(@$msg{qw(db type key)});
    if (!$want{$id}) {
        push @unexpected, $msg;
    }
    elsif ($got{$id}) {
        push @duplicates, $msg;
    }
    else {
        $got{$id} = $msg;
    }
    if (!$complete && keys %got == keys %want) {
        $complete = 1;
        Time::HiRes::alarm(1);
    }
});
alarm 0;

for my $case (@cases) {
    my $name = "db $case->{db} $case->{type} " . unpack('H*', substr $case->{key}, 0, 24);
    my $msg  = $got{ id(@$case{qw(db type key)}) };
    ok($msg, "$name: received") or next;
    is($msg->{type_code}, $case->{type} eq 'string' ? 0 : 1, "$name: type code");
    ok(same_value($msg->{value}, $case->{value}), "$name: value decoded exactly");
    if ($case->{type} eq 'hash') {
        is(scalar @{ $msg->{parts} }, scalar @{ $case->{fields} }, "$name: every field once");
    }
}
is(scalar @duplicates, 0, 'no key arrived twice')
    or diag(join "\n", map { "duplicate: db $_->{db} $_->{key}" } @duplicates);
is(scalar @unexpected, 0, 'no other key arrived (deleted and persisted keys are not expiry)')
    or diag(join "\n", map { "unexpected: db $_->{db} $_->{key}" } @unexpected);
is(scalar @errors, 0, 'no malformed message') or diag(join '', @errors);

# The keys are gone from the server too.
for my $case (@cases) {
    $redis->command('SELECT', $case->{db});
    is($redis->command('EXISTS', $case->{key}), 0, "db $case->{db} " . unpack('H*', substr $case->{key}, 0, 24) . ': gone');
}

# The listener reconnects by itself when the server restarts.
$redis->close;
stop_server();
$redis = start_server();
is($redis->command('SET', 'e2e:after-restart', 'again', 'PX', 100), 'OK', 'SET a key after a restart');
my $after;
alarm 60;
$listener->run(sub { $after = $_[0]; $listener->stop });
alarm 0;
is($after && $after->{key}, 'e2e:after-restart', 'received after the restart');
is($after && $after->{value}, 'again', 'its value');

$redis->close;
$listener->close;
stop_server();
diag("server log:\n" . server_log()) if !Test::More->builder->is_passing;

done_testing;
