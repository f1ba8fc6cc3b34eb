! A checkpoint writer and reader shaped like S3D-IO, the benchmark of the
! DTF paper (Martsinkevich et al.): written for Cove from the paper's
! description and PnetCDF's Fortran API. Unmodified PnetCDF: no Cove or
! DTF calls.
!
!   s3d_io write|read METHOD PATH PX PY PZ NX NY NZ [timed]
!
! The global grid NX x NY x NZ is split in blocks over PX x PY x PZ ranks.
! Four double variables share the spatial dimensions x, y, z: pressure and
! temperature (3-D), u (4-D, 3 components) and yspecies (4-D, 11
! components). The writer creates the file, asks for its MPI_Info right
! after the create (nfmpi_get_file_info), and puts its block of every
! variable with put_vara_double_all (METHOD 0) or iput_vara_double and one
! wait_all (METHOD 1). The reader gets its block with get_vara_double_all
! (0) or iget_vara_double and wait_all (1) and checks every value against
! the writer's formula. Rank 0 prints one line per variable with the sum of
! all ranks' values, so that runs can be compared line by line. With
! `timed` it also prints `time MODE SECONDS`: the slowest rank's time from
! the create or open to the end of the close, less its own filling of the
! buffer (bench/pnetcdf_compare.py).
program s3d_io
  implicit none
  include 'mpif.h'
  include 'pnetcdf.inc'

  character(len=256) :: arg, path
  character(len=16) :: mode
  character(len=16), dimension(4) :: names = [character(len=16) :: 'pressure', 'temperature', 'u', 'yspecies']
  integer, dimension(4) :: ncomp = [1, 1, 3, 11]
  integer :: method, px, py, pz, nx, ny, nz, ierr, rank, nprocs, ncid, info, v, c, i, j, k
  integer :: cx, cy, cz, lx, ly, lz, status, mismatches, total
  integer :: dims(4), varids(4), reqs(4), statuses(4)
  integer(kind=MPI_OFFSET_KIND) :: start(4), count(4), gx, gy, gz
  double precision, allocatable :: buf(:, :, :, :, :)
  double precision :: expect, local_sum(4), global_sum(4), t0, tfill, tio(1), tmax(1)
  logical :: timed

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  timed = .false.
  if (command_argument_count() == 10) then
    call get_command_argument(10, arg)
    timed = arg == 'timed'
  end if
  if (command_argument_count() /= 9 .and. .not. timed) then
    if (rank == 0) print '(a)', 'usage: s3d_io write|read METHOD PATH PX PY PZ NX NY NZ [timed]'
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  call get_command_argument(1, mode)
  call get_command_argument(2, arg)
  read (arg, *) method
  call get_command_argument(3, path)
  call get_command_argument(4, arg)
  read (arg, *) px
  call get_command_argument(5, arg)
  read (arg, *) py
  call get_command_argument(6, arg)
  read (arg, *) pz
  call get_command_argument(7, arg)
  read (arg, *) nx
  call get_command_argument(8, arg)
  read (arg, *) ny
  call get_command_argument(9, arg)
  read (arg, *) nz
  if (px * py * pz /= nprocs .or. mod(nx, px) /= 0 .or. mod(ny, py) /= 0 .or. mod(nz, pz) /= 0) then
    if (rank == 0) print '(a)', 's3d_io: PX*PY*PZ must be the number of ranks and divide NX, NY, NZ'
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if

  ! This rank's block: x varies fastest over the ranks.
  cx = mod(rank, px)
  cy = mod(rank / px, py)
  cz = rank / (px * py)
  lx = nx / px
  ly = ny / py
  lz = nz / pz
  allocate (buf(lx, ly, lz, 11, 4))
  mismatches = 0
  tfill = 0

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  t0 = MPI_Wtime()
  if (mode == 'write') then
    call check(nfmpi_create(MPI_COMM_WORLD, trim(path), ior(NF_CLOBBER, NF_64BIT_DATA), MPI_INFO_NULL, ncid), 'create')
    call check(nfmpi_get_file_info(ncid, info), 'get_file_info')
    call MPI_Info_free(info, ierr)
    call check(nfmpi_def_dim(ncid, 'x', int(nx, MPI_OFFSET_KIND), dims(1)), 'def_dim x')
    call check(nfmpi_def_dim(ncid, 'y', int(ny, MPI_OFFSET_KIND), dims(2)), 'def_dim y')
    call check(nfmpi_def_dim(ncid, 'z', int(nz, MPI_OFFSET_KIND), dims(3)), 'def_dim z')
    do v = 1, 4
      if (ncomp(v) == 1) then
        call check(nfmpi_def_var(ncid, trim(names(v)), NF_DOUBLE, 3, dims, varids(v)), 'def_var')
      else
        if (ncomp(v) == 3) call check(nfmpi_def_dim(ncid, 'three', 3_MPI_OFFSET_KIND, dims(4)), 'def_dim three')
        if (ncomp(v) == 11) call check(nfmpi_def_dim(ncid, 'nsp', 11_MPI_OFFSET_KIND, dims(4)), 'def_dim nsp')
        call check(nfmpi_def_var(ncid, trim(names(v)), NF_DOUBLE, 4, dims, varids(v)), 'def_var')
      end if
    end do
    call check(nfmpi_enddef(ncid), 'enddef')
    tfill = MPI_Wtime()
    do v = 1, 4
      do c = 1, ncomp(v)
        do k = 1, lz
          do j = 1, ly
            do i = 1, lx
              buf(i, j, k, c, v) = value(v, c, cx * lx + i, cy * ly + j, cz * lz + k)
            end do
          end do
        end do
      end do
    end do
    tfill = MPI_Wtime() - tfill
  else
    call check(nfmpi_open(MPI_COMM_WORLD, trim(path), NF_NOWRITE, MPI_INFO_NULL, ncid), 'open')
    do v = 1, 4
      call check(nfmpi_inq_varid(ncid, trim(names(v)), varids(v)), 'inq_varid')
    end do
    buf = -1
  end if

  ! Fortran order: start and count run x, y, z[, component].
  do v = 1, 4
    start(1:3) = [int(cx * lx + 1, MPI_OFFSET_KIND), int(cy * ly + 1, MPI_OFFSET_KIND), int(cz * lz + 1, MPI_OFFSET_KIND)]
    count(1:3) = [int(lx, MPI_OFFSET_KIND), int(ly, MPI_OFFSET_KIND), int(lz, MPI_OFFSET_KIND)]
    start(4) = 1
    count(4) = ncomp(v)
    if (mode == 'write' .and. method == 0) then
      call check(nfmpi_put_vara_double_all(ncid, varids(v), start, count, buf(:, :, :, 1:ncomp(v), v)), 'put_vara_all')
    else if (mode == 'write') then
      call check(nfmpi_iput_vara_double(ncid, varids(v), start, count, buf(:, :, :, 1:ncomp(v), v), reqs(v)), 'iput_vara')
    else if (method == 0) then
      call check(nfmpi_get_vara_double_all(ncid, varids(v), start, count, buf(:, :, :, 1:ncomp(v), v)), 'get_vara_all')
    else
      call check(nfmpi_iget_vara_double(ncid, varids(v), start, count, buf(:, :, :, 1:ncomp(v), v), reqs(v)), 'iget_vara')
    end if
  end do
  if (method == 1) then
    call check(nfmpi_wait_all(ncid, 4, reqs, statuses), 'wait_all')
    do v = 1, 4
      call check(statuses(v), 'a request')
    end do
  end if
  call check(nfmpi_close(ncid), 'close')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  tio(1) = MPI_Wtime() - t0 - tfill
  call MPI_Reduce(tio, tmax, 1, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
  if (timed .and. rank == 0) print '(a, 1x, a, 1x, f12.6)', 'time', trim(mode), tmax(1)

  do v = 1, 4
    local_sum(v) = 0
    do c = 1, ncomp(v)
      do k = 1, lz
        do j = 1, ly
          do i = 1, lx
            gx = cx * lx + i
            gy = cy * ly + j
            gz = cz * lz + k
            expect = value(v, c, int(gx), int(gy), int(gz))
            if (buf(i, j, k, c, v) /= expect) mismatches = mismatches + 1
            local_sum(v) = local_sum(v) + buf(i, j, k, c, v)
          end do
        end do
      end do
    end do
  end do
  call MPI_Reduce(local_sum, global_sum, 4, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(mismatches, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do v = 1, 4
      print '(a, 1x, a, 1x, es24.16)', trim(mode), trim(names(v)), global_sum(v)
    end do
    print '(a, 1x, a, i0)', trim(mode), 'mismatches ', total
  end if
  status = 0
  if (total /= 0) status = 1
  deallocate (buf)
  call MPI_Finalize(ierr)
  if (status /= 0) stop 1

contains

  ! The writer's value of component c of variable v at global (x, y, z), 1-based.
  double precision function value(v, c, x, y, z)
    integer, intent(in) :: v, c, x, y, z
    value = 1000000.0d0 * v + 10000.0d0 * c + 0.25d0 * (x + 100 * (y + 100 * z))
  end function value

  subroutine check(err, what)
    integer, intent(in) :: err
    character(len=*), intent(in) :: what
    integer :: ignored
    if (err /= NF_NOERR) then
      print '(a, a, a, a)', 's3d_io: ', what, ': ', trim(nfmpi_strerror(err))
      call MPI_Abort(MPI_COMM_WORLD, 1, ignored)
    end if
  end subroutine check

end program s3d_io
