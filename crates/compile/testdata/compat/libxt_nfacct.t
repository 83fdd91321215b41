:INPUT,FORWARD,OUTPUT
%nfacct add nfk
# iptables prints two spaces after --nfacct-name.
-m nfacct --nfacct-name nfk;-m nfacct --nfacct-name  nfk;OK
