; isovet static encoding; model ec; transactions [withdraw]
(set-logic ALL)
(declare-sort T 0)
(declare-datatypes ((Ty 0)) (((ty.withdraw))))
(declare-sort R.Account 0)
(declare-datatypes ((F.Account 0)) (((Account.Alive) (Account.Balance))))
(declare-fun Account.AccID (R.Account) Int)
(declare-fun alive.Account (R.Account T) Bool)
(declare-fun WR.Account (R.Account F.Account T T) Bool)
(declare-fun WW.Account (R.Account F.Account T T) Bool)
(declare-fun RW.Account (R.Account F.Account T T) Bool)
(declare-fun typ (T) Ty)
(declare-fun vis (T T) Bool)
(declare-fun ar (T T) Bool)
(declare-fun WR (T T) Bool)
(declare-fun WW (T T) Bool)
(declare-fun RW (T T) Bool)
(declare-fun withdraw.ID (T) Int)
(declare-fun withdraw.Amount (T) Int)
(declare-fun withdraw.bal (T) Int)
(declare-fun withdraw.bal.null (T) Bool)
(define-fun D ((a T) (b T)) Bool (or (= a b) (WR a b) (WW a b) (RW a b)))
; basic: ar is a strict total order, vis ⊆ ar, Lemma 4
(declare-const e1 T)
(declare-const e2 T)
(declare-const c1 T)
(declare-const c2 T)
(assert
  (and
    (not (vis e1 e1))
    (not (vis e2 e1))
    (not (vis e2 e2))
    (=> (WR e1 e1) (vis e1 e1))
    (=> (WR e1 e2) (vis e1 e2))
    (=> (WR e2 e1) (vis e2 e1))
    (=> (WR e2 e2) (vis e2 e2))
    (not (WW e1 e1))
    (not (WW e2 e1))
    (not (WW e2 e2))
    (=> (RW e1 e1) (not (vis e1 e1)))
    (=> (RW e1 e2) (not (vis e2 e1)))
    (=> (RW e2 e1) (not (vis e1 e2)))
    (=> (RW e2 e2) (not (vis e2 e2)))))
; a dependency between instances is a dependency on some row and field
(assert
  (and
    (=> (WR e1 e1) (exists ((r R.Account)) (WR.Account r Account.Balance e1 e1)))
    (=> (WR e1 e2) (exists ((r R.Account)) (WR.Account r Account.Balance e1 e2)))
    (=> (WR e2 e1) (exists ((r R.Account)) (WR.Account r Account.Balance e2 e1)))
    (=> (WR e2 e2) (exists ((r R.Account)) (WR.Account r Account.Balance e2 e2)))))
(assert
  (and
    (=> (WW e1 e1) (exists ((r R.Account)) (WW.Account r Account.Balance e1 e1)))
    (=> (WW e1 e2) (exists ((r R.Account)) (WW.Account r Account.Balance e1 e2)))
    (=> (WW e2 e1) (exists ((r R.Account)) (WW.Account r Account.Balance e2 e1)))
    (=> (WW e2 e2) (exists ((r R.Account)) (WW.Account r Account.Balance e2 e2)))))
(assert
  (and
    (=> (RW e1 e1) (exists ((r R.Account)) (RW.Account r Account.Balance e1 e1)))
    (=> (RW e1 e2) (exists ((r R.Account)) (RW.Account r Account.Balance e1 e2)))
    (=> (RW e2 e1) (exists ((r R.Account)) (RW.Account r Account.Balance e2 e1)))
    (=> (RW e2 e2) (exists ((r R.Account)) (RW.Account r Account.Balance e2 e2)))))
; table Account
(declare-fun row.Account (Int) R.Account)
(assert (forall ((r R.Account)) (= (row.Account (Account.AccID r)) r)))
(assert
  (and
    (forall ((r R.Account)) (=> (WR.Account r Account.Balance e1 e1) (WR e1 e1)))
    (forall ((r R.Account)) (=> (WR.Account r Account.Balance e1 e2) (WR e1 e2)))
    (forall ((r R.Account)) (=> (WR.Account r Account.Balance e2 e1) (WR e2 e1)))
    (forall ((r R.Account)) (=> (WR.Account r Account.Balance e2 e2) (WR e2 e2)))
    (forall ((r R.Account)) (=> (WW.Account r Account.Balance e1 e1) (WW e1 e1)))
    (forall ((r R.Account)) (=> (WW.Account r Account.Balance e1 e2) (WW e1 e2)))
    (forall ((r R.Account)) (=> (WW.Account r Account.Balance e2 e1) (WW e2 e1)))
    (forall ((r R.Account)) (=> (WW.Account r Account.Balance e2 e2) (WW e2 e2)))
    (forall ((r R.Account)) (=> (RW.Account r Account.Balance e1 e1) (RW e1 e1)))
    (forall ((r R.Account)) (=> (RW.Account r Account.Balance e1 e2) (RW e1 e2)))
    (forall ((r R.Account)) (=> (RW.Account r Account.Balance e2 e1) (RW e2 e1)))
    (forall ((r R.Account)) (=> (RW.Account r Account.Balance e2 e2) (RW e2 e2)))))
(assert
  (and
    (forall ((r R.Account))
      (!
        (=>
          (and (WR.Account r Account.Balance e1 e1) (RW.Account r Account.Balance e1 e1))
          (WW.Account r Account.Balance e1 e1))
        :pattern
        ((WR.Account r Account.Balance e1 e1) (RW.Account r Account.Balance e1 e1))))
    (forall ((r R.Account))
      (!
        (=>
          (and (WR.Account r Account.Balance e1 e1) (RW.Account r Account.Balance e1 e2))
          (WW.Account r Account.Balance e1 e2))
        :pattern
        ((WR.Account r Account.Balance e1 e1) (RW.Account r Account.Balance e1 e2))))
    (forall ((r R.Account))
      (!
        (=>
          (and (WR.Account r Account.Balance e2 e1) (RW.Account r Account.Balance e1 e1))
          (WW.Account r Account.Balance e2 e1))
        :pattern
        ((WR.Account r Account.Balance e2 e1) (RW.Account r Account.Balance e1 e1))))
    (forall ((r R.Account))
      (!
        (=>
          (and (WR.Account r Account.Balance e2 e1) (RW.Account r Account.Balance e1 e2))
          (WW.Account r Account.Balance e2 e2))
        :pattern
        ((WR.Account r Account.Balance e2 e1) (RW.Account r Account.Balance e1 e2))))
    (forall ((r R.Account))
      (!
        (=>
          (and (WR.Account r Account.Balance e1 e2) (RW.Account r Account.Balance e2 e1))
          (WW.Account r Account.Balance e1 e1))
        :pattern
        ((WR.Account r Account.Balance e1 e2) (RW.Account r Account.Balance e2 e1))))
    (forall ((r R.Account))
      (!
        (=>
          (and (WR.Account r Account.Balance e1 e2) (RW.Account r Account.Balance e2 e2))
          (WW.Account r Account.Balance e1 e2))
        :pattern
        ((WR.Account r Account.Balance e1 e2) (RW.Account r Account.Balance e2 e2))))
    (forall ((r R.Account))
      (!
        (=>
          (and (WR.Account r Account.Balance e2 e2) (RW.Account r Account.Balance e2 e1))
          (WW.Account r Account.Balance e2 e1))
        :pattern
        ((WR.Account r Account.Balance e2 e2) (RW.Account r Account.Balance e2 e1))))
    (forall ((r R.Account))
      (!
        (=>
          (and (WR.Account r Account.Balance e2 e2) (RW.Account r Account.Balance e2 e2))
          (WW.Account r Account.Balance e2 e2))
        :pattern
        ((WR.Account r Account.Balance e2 e2) (RW.Account r Account.Balance e2 e2))))))
(assert
  (and
    (forall ((r R.Account))
      (!
        (not (and (WR.Account r Account.Balance e1 e1) (WR.Account r Account.Balance e2 e1)))
        :pattern
        ((WR.Account r Account.Balance e1 e1) (WR.Account r Account.Balance e2 e1))))
    (forall ((r R.Account))
      (!
        (not (and (WR.Account r Account.Balance e1 e2) (WR.Account r Account.Balance e2 e2)))
        :pattern
        ((WR.Account r Account.Balance e1 e2) (WR.Account r Account.Balance e2 e2))))
    (forall ((r R.Account))
      (!
        (not (and (WR.Account r Account.Balance e2 e1) (WR.Account r Account.Balance e1 e1)))
        :pattern
        ((WR.Account r Account.Balance e2 e1) (WR.Account r Account.Balance e1 e1))))
    (forall ((r R.Account))
      (!
        (not (and (WR.Account r Account.Balance e2 e2) (WR.Account r Account.Balance e1 e2)))
        :pattern
        ((WR.Account r Account.Balance e2 e2) (WR.Account r Account.Balance e1 e2))))))
(assert
  (and
    (forall ((r R.Account)) (=> (alive.Account r e1) (alive.Account r e1)))
    (forall ((r R.Account)) (=> (alive.Account r e1) (alive.Account r e2)))
    (forall ((r R.Account)) (=> (alive.Account r e2) (alive.Account r e1)))
    (forall ((r R.Account)) (=> (alive.Account r e2) (alive.Account r e2)))))
(assert
  (and
    (forall ((r R.Account))
      (!
        (=>
          (WR.Account r Account.Balance e1 e1)
          (and
            (= (typ e1) ty.withdraw)
            (= (typ e1) ty.withdraw)
            (not (withdraw.bal.null e1))
            (> (withdraw.bal e1) (withdraw.Amount e1))
            (= (Account.AccID r) (withdraw.ID e1))
            (alive.Account r e1)
            (= (Account.AccID r) (withdraw.ID e1))))
        :pattern
        ((WR.Account r Account.Balance e1 e1))))
    (forall ((r R.Account))
      (!
        (=>
          (WR.Account r Account.Balance e1 e2)
          (and
            (= (typ e1) ty.withdraw)
            (= (typ e2) ty.withdraw)
            (not (withdraw.bal.null e1))
            (> (withdraw.bal e1) (withdraw.Amount e1))
            (= (Account.AccID r) (withdraw.ID e1))
            (alive.Account r e1)
            (= (Account.AccID r) (withdraw.ID e2))))
        :pattern
        ((WR.Account r Account.Balance e1 e2))))
    (forall ((r R.Account))
      (!
        (=>
          (WR.Account r Account.Balance e2 e1)
          (and
            (= (typ e2) ty.withdraw)
            (= (typ e1) ty.withdraw)
            (not (withdraw.bal.null e2))
            (> (withdraw.bal e2) (withdraw.Amount e2))
            (= (Account.AccID r) (withdraw.ID e2))
            (alive.Account r e2)
            (= (Account.AccID r) (withdraw.ID e1))))
        :pattern
        ((WR.Account r Account.Balance e2 e1))))
    (forall ((r R.Account))
      (!
        (=>
          (WR.Account r Account.Balance e2 e2)
          (and
            (= (typ e2) ty.withdraw)
            (= (typ e2) ty.withdraw)
            (not (withdraw.bal.null e2))
            (> (withdraw.bal e2) (withdraw.Amount e2))
            (= (Account.AccID r) (withdraw.ID e2))
            (alive.Account r e2)
            (= (Account.AccID r) (withdraw.ID e2))))
        :pattern
        ((WR.Account r Account.Balance e2 e2))))))
; (necessary conditions for WR on Account: 1 statement pairs)
(assert
  (and
    (forall ((r R.Account))
      (!
        (=>
          (WW.Account r Account.Balance e1 e1)
          (and
            (= (typ e1) ty.withdraw)
            (= (typ e1) ty.withdraw)
            (not (withdraw.bal.null e1))
            (> (withdraw.bal e1) (withdraw.Amount e1))
            (= (Account.AccID r) (withdraw.ID e1))
            (alive.Account r e1)
            (not (withdraw.bal.null e1))
            (> (withdraw.bal e1) (withdraw.Amount e1))
            (= (Account.AccID r) (withdraw.ID e1))
            (alive.Account r e1)))
        :pattern
        ((WW.Account r Account.Balance e1 e1))))
    (forall ((r R.Account))
      (!
        (=>
          (WW.Account r Account.Balance e1 e2)
          (and
            (= (typ e1) ty.withdraw)
            (= (typ e2) ty.withdraw)
            (not (withdraw.bal.null e1))
            (> (withdraw.bal e1) (withdraw.Amount e1))
            (= (Account.AccID r) (withdraw.ID e1))
            (alive.Account r e1)
            (not (withdraw.bal.null e2))
            (> (withdraw.bal e2) (withdraw.Amount e2))
            (= (Account.AccID r) (withdraw.ID e2))
            (alive.Account r e2)))
        :pattern
        ((WW.Account r Account.Balance e1 e2))))
    (forall ((r R.Account))
      (!
        (=>
          (WW.Account r Account.Balance e2 e1)
          (and
            (= (typ e2) ty.withdraw)
            (= (typ e1) ty.withdraw)
            (not (withdraw.bal.null e2))
            (> (withdraw.bal e2) (withdraw.Amount e2))
            (= (Account.AccID r) (withdraw.ID e2))
            (alive.Account r e2)
            (not (withdraw.bal.null e1))
            (> (withdraw.bal e1) (withdraw.Amount e1))
            (= (Account.AccID r) (withdraw.ID e1))
            (alive.Account r e1)))
        :pattern
        ((WW.Account r Account.Balance e2 e1))))
    (forall ((r R.Account))
      (!
        (=>
          (WW.Account r Account.Balance e2 e2)
          (and
            (= (typ e2) ty.withdraw)
            (= (typ e2) ty.withdraw)
            (not (withdraw.bal.null e2))
            (> (withdraw.bal e2) (withdraw.Amount e2))
            (= (Account.AccID r) (withdraw.ID e2))
            (alive.Account r e2)
            (not (withdraw.bal.null e2))
            (> (withdraw.bal e2) (withdraw.Amount e2))
            (= (Account.AccID r) (withdraw.ID e2))
            (alive.Account r e2)))
        :pattern
        ((WW.Account r Account.Balance e2 e2))))))
; (necessary conditions for WW on Account: 1 statement pairs)
(assert
  (and
    (forall ((r R.Account))
      (!
        (=>
          (RW.Account r Account.Balance e1 e1)
          (and
            (= (typ e1) ty.withdraw)
            (= (typ e1) ty.withdraw)
            (= (Account.AccID r) (withdraw.ID e1))
            (not (withdraw.bal.null e1))
            (> (withdraw.bal e1) (withdraw.Amount e1))
            (= (Account.AccID r) (withdraw.ID e1))
            (alive.Account r e1)))
        :pattern
        ((RW.Account r Account.Balance e1 e1))))
    (forall ((r R.Account))
      (!
        (=>
          (RW.Account r Account.Balance e1 e2)
          (and
            (= (typ e1) ty.withdraw)
            (= (typ e2) ty.withdraw)
            (= (Account.AccID r) (withdraw.ID e1))
            (not (withdraw.bal.null e2))
            (> (withdraw.bal e2) (withdraw.Amount e2))
            (= (Account.AccID r) (withdraw.ID e2))
            (alive.Account r e2)))
        :pattern
        ((RW.Account r Account.Balance e1 e2))))
    (forall ((r R.Account))
      (!
        (=>
          (RW.Account r Account.Balance e2 e1)
          (and
            (= (typ e2) ty.withdraw)
            (= (typ e1) ty.withdraw)
            (= (Account.AccID r) (withdraw.ID e2))
            (not (withdraw.bal.null e1))
            (> (withdraw.bal e1) (withdraw.Amount e1))
            (= (Account.AccID r) (withdraw.ID e1))
            (alive.Account r e1)))
        :pattern
        ((RW.Account r Account.Balance e2 e1))))
    (forall ((r R.Account))
      (!
        (=>
          (RW.Account r Account.Balance e2 e2)
          (and
            (= (typ e2) ty.withdraw)
            (= (typ e2) ty.withdraw)
            (= (Account.AccID r) (withdraw.ID e2))
            (not (withdraw.bal.null e2))
            (> (withdraw.bal e2) (withdraw.Amount e2))
            (= (Account.AccID r) (withdraw.ID e2))
            (alive.Account r e2)))
        :pattern
        ((RW.Account r Account.Balance e2 e2))))))
; (necessary conditions for RW on Account: 1 statement pairs)
; forcing: exact writes of one row and field ordered by ar are WW
(assert
  (and
    (forall ((r R.Account))
      (=>
        (and
          (= (typ e1) ty.withdraw)
          (= (typ e2) ty.withdraw)
          (not (withdraw.bal.null e1))
          (> (withdraw.bal e1) (withdraw.Amount e1))
          (= (Account.AccID r) (withdraw.ID e1))
          (alive.Account r e1)
          (not (withdraw.bal.null e2))
          (> (withdraw.bal e2) (withdraw.Amount e2))
          (= (Account.AccID r) (withdraw.ID e2))
          (alive.Account r e2))
        (WW.Account r Account.Balance e1 e2)))
    (forall ((r R.Account))
      (=>
        (and
          (= (typ e2) ty.withdraw)
          (= (typ e1) ty.withdraw)
          (not (withdraw.bal.null e2))
          (> (withdraw.bal e2) (withdraw.Amount e2))
          (= (Account.AccID r) (withdraw.ID e2))
          (alive.Account r e2)
          (not (withdraw.bal.null e1))
          (> (withdraw.bal e1) (withdraw.Amount e1))
          (= (Account.AccID r) (withdraw.ID e1))
          (alive.Account r e1))
        (WW.Account r Account.Balance e1 e2)))))
; variables of withdraw
(assert
  (and
    (=>
      (and (= (typ e1) ty.withdraw) (not (withdraw.bal.null e1)))
      (exists ((r1 R.Account)) (and (= (Account.AccID r1) (withdraw.ID e1)) (alive.Account r1 e1))))
    (=>
      (and (= (typ e2) ty.withdraw) (not (withdraw.bal.null e2)))
      (exists ((r1 R.Account)) (and (= (Account.AccID r1) (withdraw.ID e2)) (alive.Account r1 e2))))))
(assert
  (and
    (forall ((r1 R.Account))
      (=>
        (and (= (typ e1) ty.withdraw) (= (Account.AccID r1) (withdraw.ID e1)) (alive.Account r1 e1))
        (not (withdraw.bal.null e1))))
    (forall ((r1 R.Account))
      (=>
        (and (= (typ e2) ty.withdraw) (= (Account.AccID r1) (withdraw.ID e2)) (alive.Account r1 e2))
        (not (withdraw.bal.null e2))))))
(assert
  (and
    (forall ((r R.Account))
      (=>
        (and
          (= (typ e1) ty.withdraw)
          (= (typ e2) ty.withdraw)
          (= (Account.AccID r) (withdraw.ID e1))
          (= (Account.AccID r) (withdraw.ID e2))
          (alive.Account r e1)
          (alive.Account r e2)
          (not (withdraw.bal.null e1))
          (not (withdraw.bal.null e2))
          (= (WR.Account r Account.Balance e1 e1) (WR.Account r Account.Balance e1 e2))
          (= (WR.Account r Account.Balance e2 e1) (WR.Account r Account.Balance e2 e2)))
        (= (withdraw.bal e1) (withdraw.bal e2))))
    (forall ((r R.Account))
      (=>
        (and
          (= (typ e2) ty.withdraw)
          (= (typ e1) ty.withdraw)
          (= (Account.AccID r) (withdraw.ID e2))
          (= (Account.AccID r) (withdraw.ID e1))
          (alive.Account r e2)
          (alive.Account r e1)
          (not (withdraw.bal.null e2))
          (not (withdraw.bal.null e1))
          (= (WR.Account r Account.Balance e1 e2) (WR.Account r Account.Balance e1 e1))
          (= (WR.Account r Account.Balance e2 e2) (WR.Account r Account.Balance e2 e1)))
        (= (withdraw.bal e2) (withdraw.bal e1))))))
(assert
  (and
    (forall ((r R.Account))
      (=>
        (and
          (= (typ e1) ty.withdraw)
          (= (typ e1) ty.withdraw)
          (not (withdraw.bal.null e1))
          (> (withdraw.bal e1) (withdraw.Amount e1))
          (= (Account.AccID r) (withdraw.ID e1))
          (alive.Account r e1)
          (not (withdraw.bal.null e1))
          (= (Account.AccID r) (withdraw.ID e1))
          (alive.Account r e1)
          (WR.Account r Account.Balance e1 e1))
        (and
          (not (withdraw.bal.null e1))
          (= (withdraw.bal e1) (- (withdraw.bal e1) (withdraw.Amount e1))))))
    (forall ((r R.Account))
      (=>
        (and
          (= (typ e1) ty.withdraw)
          (= (typ e2) ty.withdraw)
          (not (withdraw.bal.null e1))
          (> (withdraw.bal e1) (withdraw.Amount e1))
          (= (Account.AccID r) (withdraw.ID e1))
          (alive.Account r e1)
          (not (withdraw.bal.null e1))
          (= (Account.AccID r) (withdraw.ID e2))
          (alive.Account r e2)
          (WR.Account r Account.Balance e1 e2))
        (and
          (not (withdraw.bal.null e2))
          (= (withdraw.bal e2) (- (withdraw.bal e1) (withdraw.Amount e1))))))
    (forall ((r R.Account))
      (=>
        (and
          (= (typ e2) ty.withdraw)
          (= (typ e1) ty.withdraw)
          (not (withdraw.bal.null e2))
          (> (withdraw.bal e2) (withdraw.Amount e2))
          (= (Account.AccID r) (withdraw.ID e2))
          (alive.Account r e2)
          (not (withdraw.bal.null e2))
          (= (Account.AccID r) (withdraw.ID e1))
          (alive.Account r e1)
          (WR.Account r Account.Balance e2 e1))
        (and
          (not (withdraw.bal.null e1))
          (= (withdraw.bal e1) (- (withdraw.bal e2) (withdraw.Amount e2))))))
    (forall ((r R.Account))
      (=>
        (and
          (= (typ e2) ty.withdraw)
          (= (typ e2) ty.withdraw)
          (not (withdraw.bal.null e2))
          (> (withdraw.bal e2) (withdraw.Amount e2))
          (= (Account.AccID r) (withdraw.ID e2))
          (alive.Account r e2)
          (not (withdraw.bal.null e2))
          (= (Account.AccID r) (withdraw.ID e2))
          (alive.Account r e2)
          (WR.Account r Account.Balance e2 e2))
        (and
          (not (withdraw.bal.null e2))
          (= (withdraw.bal e2) (- (withdraw.bal e2) (withdraw.Amount e2))))))))
; query execution k=2
; instances: distinct, named in arbitration order
(assert (distinct e1 e2))
(assert (not (ar e1 e1)))
(assert (ar e1 e2))
(assert (not (ar e2 e1)))
(assert (not (ar e2 e2)))
(assert (and (not (= c1 c2)) (or (= c1 e1) (= c1 e2)) (D c1 c2) (or (= c2 e1) (= c2 e2)) (D c2 c1)))
(check-sat)
