# A Perl workload for bench/fidelity.py: hash, array and string work (about a second).
# Argument: the size (default 150000 records). Prints one deterministic checksum line.
use strict;
use warnings;

my $n = $ARGV[0] // 150000;
my $state = 12345;
sub rnd { $state = ($state * 1103515245 + 12345) % 2147483648; return $state >> 8; }

my @syl = qw(ka lo mi ne ru sa to vi xe zu);
my (@records, %index);
for my $i (0 .. $n - 1) {
  my $len = 2 + rnd() % 4;
  my $word = join '', map { $syl[rnd() % 10] } 1 .. $len;
  push @records, { id => $i, word => $word, value => rnd() % 1000, tags => [substr($word, 0, 2), substr($word, -2)] };
  push @{ $index{$word} }, $i;
}
my %groups;
for my $w (keys %index) { my $s = 0; $s += $records[$_]{value} for @{ $index{$w} }; $groups{$w} = $s; }
my @top = (sort { $groups{$b} <=> $groups{$a} or $a cmp $b } keys %groups)[0 .. 19];
my $text = join ',', map { "$_->{word}:$_->{value}" } @records[0 .. int($n / 2) - 1];
my %lengths;
$lengths{ length $_ }++ for split /,/, $text;
my $checksum = 0;
my $m = 2305843009213693951;
$checksum = ($checksum * 31 + $groups{$_} + length $_) % $m for @top;
$checksum = ($checksum * 31 + $_ * $lengths{$_}) % $m for sort { $a <=> $b } keys %lengths;
$checksum = ($checksum * 31 + scalar(@records) + scalar(keys %index)) % $m;
printf "perl words=%d checksum=%016x\n", scalar(keys %index), $checksum;
