! cove_connect_comm (module cove_mpi): every rank of MPI_COMM_WORLD
! connects through one read of the connection file (COVE_CONNECT), puts
! its row, and rank 0 reads them all back; a target that is not there gives
! every rank the same failure with rank 0's message; bytes that are not a
! ticket are refused. Run under mpiexec with 3 ranks (exchange.sh comm).
program fortran_comm
  use, intrinsic :: iso_fortran_env, only: int64
  use mpi
  use cove
  use cove_mpi
  use values
  implicit none
  type(cove_client) :: client, other
  integer :: rank, ranks, ierr, status, lowest, highest, all_failures, j
  integer(int64) :: row(1, 4)
  integer(int64), allocatable :: whole(:, :)
  character(:), allocatable :: message

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, ranks, ierr)

  call expect_status(cove_connect_comm(client, MPI_COMM_WORLD, timeout_ms=20000_int64), COVE_OK, "collective connect")
  call expect_status(cove_define(client, "comm", "i8", [int(ranks, int64), 4_int64]), COVE_OK, "define comm")
  do j = 1, 4
    row(1, j) = v2(rank, j - 1)
  end do
  call expect_status(cove_put(client, "comm", 1_int64, row, [int(rank, int64), 0_int64]), COVE_OK, "put a row")
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    allocate(whole(ranks, 4))
    call expect_status(cove_get(client, "comm", 1_int64, whole, timeout_ms=20000_int64), COVE_OK, "get every row")
    do j = 1, 4
      call expect(all(whole(:, j) == [(v2(status, j - 1), status = 0, ranks - 1)]), "a row of another rank")
    end do
  end if
  call MPI_Barrier(MPI_COMM_WORLD, ierr)

  ! A connection file that never appears: the same failure everywhere.
  status = cove_connect_comm(other, MPI_COMM_WORLD, "/nonexistent/cove.conn", 200_int64)
  message = cove_last_error()
  call MPI_Allreduce(status, lowest, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(status, highest, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call expect(status /= COVE_OK .and. lowest == highest, "every rank fails alike without the file")
  call expect(index(message, "/nonexistent/cove.conn") > 0, "the message names the file: '"//message//"'")

  call expect_status(cove_connect_with_ticket(other, "not a ticket"), COVE_INVALID_ARGUMENT, "garbage ticket", &
                     "not a cove_connect_ticket")
  call expect_status(cove_disconnect(client), COVE_OK, "disconnect")

  call MPI_Allreduce(failures, all_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a, i0, a, i0, a)', "fortran_comm: ", ranks, " ranks, ", all_failures, " failed checks"
  call MPI_Finalize(ierr)
  if (all_failures /= 0) stop 1
end program
